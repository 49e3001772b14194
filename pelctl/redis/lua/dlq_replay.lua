-- pelctl dlq replay, when the dead-letter stream and the target share a slot: per entry, in
-- one atomic script: the entry is still in the dead-letter stream, XADD its fields (prepared
-- by the client: envelope stripped or kept, retry count reset or kept, plus the replay
-- marker field) to the target, then XDEL it from the dead-letter stream. There is no moment
-- at which the entry is in both streams, or in neither.
--
-- An entry whose id is in the target-side marker set was already copied by an interrupted
-- cross-slot run (dlq_replay_add.lua): it is only deleted ('already'), never copied twice.
--
-- KEYS[1] dead-letter stream, KEYS[2..] targets and their marker sets
-- ARGV: marker field, then per entry: id, target index, marker set index (0: none),
--       create (1: XADD may create the target, 0: NOMKSTREAM), n, then n field/value strings
-- Reply per entry: replayed <new id> | already '' | skip gone | skip no-target | fail <error>
local dlq, marker_field = KEYS[1], ARGV[1]
local out = {}
local i = 2
while i <= #ARGV do
  local id, t, m = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local create, n = ARGV[i + 3], tonumber(ARGV[i + 4])
  local first = i + 5
  i = first + n
  local status, detail = 'skip', ''
  if #redis.call('XRANGE', dlq, id, id) == 0 then
    detail = 'gone'  -- replayed or purged since the plan
  elseif m > 0 and redis.call('ZSCORE', KEYS[m], id) then
    redis.call('XDEL', dlq, id)
    status = 'already'
  else
    local args = {KEYS[t]}
    if create ~= '1' then args[#args + 1] = 'NOMKSTREAM' end
    args[#args + 1] = '*'
    for j = first, first + n - 1 do args[#args + 1] = ARGV[j] end
    args[#args + 1] = marker_field
    args[#args + 1] = id
    local added = redis.pcall('XADD', unpack(args))
    local err = error_text(added)
    if err then
      status, detail = 'fail', err
    elseif not added then
      detail = 'no-target'  -- NOMKSTREAM: the source stream does not exist (any more)
    else
      redis.call('XDEL', dlq, id)
      status, detail = 'replayed', added
    end
  end
  out[#out + 1] = status
  out[#out + 1] = detail
end
return out
