// Publish an import whose every input outside it is served (the common case): each staged
// version becomes the current, served version of its uid, all in this one transaction.
// mode: write
// params: $key
MATCH (a:Importing)
WHERE a.import_key = $key
REMOVE a:Importing
SET a:Head:Live
RETURN count(a) AS published
