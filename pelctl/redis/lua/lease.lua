-- pelctl's ordered path, step 1 of 3 (on the stream's node): for a dead-letter move across
-- cluster slots, and for entries too wide for one script (requeue or dead-letter move).
--
-- Per entry: verify it, then lease it by XCLAIM-ing it to its own owner with min-idle and
-- JUSTID. The owner and the delivery count stay; the idle time restarts, so a concurrent
-- run's min-idle check fails and only this run writes the entry. The reply carries the
-- copy to write (built by the prelude's copy functions, as the one-script paths build it)
-- and where it goes. Step 2 (the client) XADDs the copy; step 3 (lease_ack.lua)
-- acknowledges the entry if the lease still holds. A crash between them leaves the entry
-- pending with its owner: a duplicate is possible, a loss is not. Nothing is ever left with
-- a pelctl consumer.
--
-- KEYS[1] stream, KEYS[2..] lock keys
-- ARGV: group, prefix, kind (requeue|dlq), max_retries (-1: none; requeue), dlq_mode
--       (none|dlq; requeue: may an entry past max_retries go to the dead-letter stream),
--       reason, lineage (1|0: --no-lineage; requeue), then 5 per entry (see the prelude)
-- Reply per entry: later '' (the call's byte budget was spent: send it again) |
--                  take {target (stream|dlq), owner, idle, deliveries, field, value, ...} |
--                  ghost '' | skip <reason> | fail <error>
local stream = KEYS[1]
local group, prefix, kind = ARGV[1], ARGV[2], ARGV[3]
local max_retries, dlq_mode, reason = tonumber(ARGV[4]), ARGV[5], ARGV[6]
local lineage = ARGV[7] == '1'
local now = nil

local function lease_one(i)
  local id, min_idle, e, fields = verify_copy(stream, group, i)
  if not id then return min_idle, e end
  now = now or server_ms()
  -- The reply: where the copy goes, the lease (owner, idle, deliveries), then the copy.
  local detail = {'stream', e[2], e[3], e[4]}
  if kind == 'requeue' then
    local retries = requeue_copy(detail, fields, prefix, id, e[4], lineage)
    if max_retries >= 0 and retries + 1 > max_retries then
      if dlq_mode ~= 'dlq' then return 'skip', 'max-retries' end
      detail = {'dlq', e[2], e[3], e[4]}
      add_envelope(detail, fields, prefix, stream, group, id, e,
                   retry_reason(reason, max_retries), now)
    end
  else
    detail[1] = 'dlq'
    add_envelope(detail, fields, prefix, stream, group, id, e, reason, now)
  end
  local taken = redis.call('XCLAIM', stream, group, e[2], min_idle, id, 'JUSTID')
  if #taken == 0 then
    redis.call('XACK', stream, group, id)
    return 'ghost', ''
  end
  return 'take', detail
end

if #ARGV >= 8 then can_ack(stream, group) end
return run_entries(lease_one, 8, 5)
