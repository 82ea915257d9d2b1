// One round trip, answered once the server holds every transaction the bookmarks name
// (`Store.await_bookmarks`).
// mode: read
// params:
RETURN 1 AS ok
