-- pelctl dlq replay, when the dead-letter stream and the target share a slot: per entry, in
-- one atomic script: the entry is still in the dead-letter stream, XADD its fields (prepared
-- by the client: envelope stripped or kept, retry count reset or kept, lineage fields) plus
-- the replay marker field (none when it is '': --no-lineage) to the target, then XDEL it
-- from the dead-letter stream. There is no moment at which the entry is in both streams, or
-- in neither.
--
-- An entry whose id is in the target-side marker set was already copied by an interrupted
-- marker-path run (dlq_replay_add.lua, or the client's path for entries too wide for a
-- script): it is only deleted ('already'), never copied twice.
--
-- The client sends only entries whose XADD fits a script (UNPACK_MAX, see the prelude); one
-- that does not is answered 'wide' with nothing written. Each entry runs isolated (each()):
-- an error in one is its 'fail', the batch goes on.
--
-- KEYS[1] dead-letter stream, KEYS[2..] targets and their marker sets
-- ARGV: marker field ('': none), then per entry: id, target index, marker set index (0: none),
--       create (1: XADD may create the target, 0: NOMKSTREAM), n, then n field/value strings
-- Reply per entry: replayed <new id> | already '' | skip gone | skip no-target |
--                  wide <XADD values needed> | fail <error>
local dlq, marker_field = KEYS[1], ARGV[1]

local function replay_one(i)
  local id, t, m = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if #redis.call('XRANGE', dlq, id, id) == 0 then
    return 'skip', 'gone'  -- replayed or purged since the plan
  end
  if m > 0 and redis.call('ZSCORE', KEYS[m], id) then
    redis.call('XDEL', dlq, id)
    return 'already', ''
  end
  local args = replay_copy(KEYS[t], ARGV[i + 3], id, i + 5, tonumber(ARGV[i + 4]), marker_field)
  if not fits(args) then return 'wide', tostring(#args) end
  local added = xadd(args)
  if type(added) == 'table' and added.err then return 'fail', added.err end
  if not added then
    return 'skip', 'no-target'  -- NOMKSTREAM: the source stream does not exist (any more)
  end
  -- XDEL of an entry just seen in the dead-letter stream cannot fail (the ACL was checked
  -- by the preflight below, before any write).
  redis.call('XDEL', dlq, id)
  return 'replayed', added
end

if #ARGV >= 2 then preflight('XDEL', dlq, '0-0') end
return run_entries(replay_one, 2, function(i) return 5 + tonumber(ARGV[i + 4]) end)
