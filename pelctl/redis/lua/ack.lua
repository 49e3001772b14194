-- pelctl ack: per entry, verify it against the plan, then XACK it.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, then 5 per entry (see the prelude)
-- Reply per entry: acked '' | skip <reason>
local stream, group = KEYS[1], ARGV[1]
local out = {}
for i = 2, #ARGV, 5 do
  local id = ARGV[i]
  local status, detail = 'skip', ''
  local why = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]))
  if why then
    detail = why
  elseif lock_held(tonumber(ARGV[i + 4])) then
    detail = 'alive'
  else
    redis.call('XACK', stream, group, id)
    status = 'acked'
  end
  out[#out + 1] = status
  out[#out + 1] = detail
end
return out
