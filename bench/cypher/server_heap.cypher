// The server's heap in use and its maximum (JMX), for the benchmark's memory figures.
// mode: read
// params:
CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
RETURN attributes.HeapMemoryUsage.value.properties AS heap
