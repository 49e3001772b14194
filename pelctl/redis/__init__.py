"""Everything that talks to Redis: connection, settings, capabilities, replies, raw paged
scans, scripts."""
