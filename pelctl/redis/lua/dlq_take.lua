-- pelctl dlq move across slots, step 1 of 3 (on the stream's node): verify each entry and
-- lease it by XCLAIM-ing it to its own owner with min-idle and JUSTID. The owner and the
-- delivery count stay; the idle time restarts, so a concurrent run's min-idle check fails
-- and only this run writes the entry to the dead-letter stream. Step 2 (the client) XADDs
-- the envelope to the dead-letter stream; step 3 (dlq_ack.lua) acknowledges. A crash
-- between them leaves the entry pending with its owner: a duplicate is possible, a loss
-- is not.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, then 5 per entry (see the prelude)
-- Reply per entry: take {owner, idle, deliveries, server ms, field, value, ...} |
--                  ghost '' | skip <reason>
local stream, group = KEYS[1], ARGV[1]
local out, now = {}, nil

for i = 2, #ARGV, 5 do
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local status, detail = 'skip', ''
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if why then
    detail = why
  elseif lock_held(tonumber(ARGV[i + 4])) then
    detail = 'alive'
  else
    local fields = entry_fields(stream, id)
    if not fields then
      redis.call('XACK', stream, group, id)
      status = 'ghost'
    else
      redis.call('XCLAIM', stream, group, e[2], min_idle, id, 'JUSTID')
      now = now or server_ms()
      detail = {e[2], e[3], e[4], now}
      for j = 1, #fields do detail[4 + j] = fields[j] end
      status = 'take'
    end
  end
  out[#out + 1] = status
  out[#out + 1] = detail
end
return out
