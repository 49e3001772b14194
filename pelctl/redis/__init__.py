"""Everything that talks to Redis: connection, contexts, capabilities, raw paged scans, scripts."""
