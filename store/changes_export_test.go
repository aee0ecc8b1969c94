package store

// SetAfterFeedRead makes c call f after every read of the change feed
// that brought entries (a test holds the follower between reads).
func SetAfterFeedRead(c *Changes, f func()) { c.afterRead = f }
