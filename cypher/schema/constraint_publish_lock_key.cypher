// One publication lock per (namespace, stripe): repairs' batch writers and barriers meet
// on these nodes (publication/lock_stripe, barrier/lock_publishers), created on first use.
// mode: write
// params:
CREATE CONSTRAINT publish_lock_key IF NOT EXISTS FOR (l:PublishLock) REQUIRE l.key IS UNIQUE
