-- pelctl dlq replay across slots, step 2 of 3 (on the target's node). Step 1 (the client)
-- read the entries from the dead-letter stream; step 3 (the client) XDELs them there.
--
-- Per entry, atomically on the target's slot: unless its dead-letter id is already in the
-- marker set (a sorted set beside the target, scored by time), XADD the prepared fields plus
-- the marker field (none when it is '': --no-lineage; the marker *set* works the same) to
-- the target and ZADD the id to the marker set. A run killed between
-- step 2 and step 3 leaves the copy and its marker: the rerun finds the marker here
-- ('already') and only deletes the dead-letter entry. A copy is never made twice, and the
-- dead-letter entry is never deleted before its copy exists.
--
-- Markers older than the retention are dropped (a rerun must come within it).
--
-- The client sends only entries whose XADD fits a script (UNPACK_MAX, see the prelude); one
-- that does not is answered 'wide' with nothing written. Each entry runs isolated (each()):
-- an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] target stream, KEYS[2] marker set
-- ARGV: marker field ('': none), create (1|0: NOMKSTREAM), retention ms, then per entry:
--       id, n, then n field/value strings
-- Reply per entry: replayed <new id> | already '' | skip no-target |
--                  wide <XADD values needed> | fail <error>
local target, markers = KEYS[1], KEYS[2]
local marker_field, create, retention = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now = server_ms()
-- Before any copy: the ZADD that must follow each copy, and the PEXPIRE at the end, are
-- allowed (ZADD XX of a member that cannot exist changes nothing; the PEXPIRE sets the TTL
-- the end sets anyway, and does nothing to a missing set).
preflight('ZADD', markers, 'XX', 0, 'pelctl-preflight')
preflight('PEXPIRE', markers, retention)
redis.call('ZREMRANGEBYSCORE', markers, '-inf', '(' .. (now - retention))
local added_any = false

local function add_one(i)
  local id = ARGV[i]
  if redis.call('ZSCORE', markers, id) then return 'already', '' end
  local args = replay_copy(target, create, id, i + 2, tonumber(ARGV[i + 1]), marker_field)
  if not fits(args) then return 'wide', tostring(#args) end
  local added = xadd(args)
  if type(added) == 'table' and added.err then return 'fail', added.err end
  if not added then return 'skip', 'no-target' end
  -- ZADD to a sorted set this script just trimmed (so it is one, or missing), allowed by
  -- the preflight: it cannot fail.
  redis.call('ZADD', markers, now, id)
  added_any = true
  return 'replayed', added
end

local out = run_entries(add_one, 4, function(i) return 2 + tonumber(ARGV[i + 1]) end)
if added_any then redis.call('PEXPIRE', markers, retention) end
return out
