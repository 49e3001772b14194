-- pelctl dlq replay of an entry too wide for a script (UNPACK_MAX, see the prelude). The
-- client sends, in one MULTI/EXEC on the target's node, under WATCH of the marker set:
--
--   XADD target [NOMKSTREAM] * <fields> <marker field> <dead-letter id>
--   EVALSHA replay_mark target markers ...
--
-- Nothing runs between the two, so the target's newest entry is the copy exactly when the
-- XADD succeeded: only then is the dead-letter id recorded in the marker set. The copy and
-- its marker exist together or not at all; the client deletes the dead letter afterwards
-- (a rerun after a crash finds the marker and only deletes, like dlq_replay_add.lua).
--
-- KEYS[1] target stream, KEYS[2] marker set
-- ARGV: marker field, dead-letter id, retention ms
-- Reply: {replayed, <new id>} | {none, ''} (the XADD wrote nothing)
local target, markers = KEYS[1], KEYS[2]
local marker_field, id, retention = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ok, last = pcall(redis.call, 'XREVRANGE', target, '+', '-', 'COUNT', 1)
if not ok or type(last) ~= 'table' or not last[1] then return {'none', ''} end
local fields = last[1][2]
local n = #fields
if n < 2 or fields[n - 1] ~= marker_field or fields[n] ~= id then return {'none', ''} end
local now = server_ms()
redis.call('ZREMRANGEBYSCORE', markers, '-inf', '(' .. (now - retention))
redis.call('ZADD', markers, now, id)
redis.call('PEXPIRE', markers, retention)
return {'replayed', last[1][1]}
