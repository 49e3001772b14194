-- pelctl: helpers shared by the per-entry repair scripts (prepended to each script).
--
-- Every entry script receives, after its own header arguments, five arguments per entry:
--   id, expected owner ('' = any), expected delivery count ('0' = any),
--   min idle ms, index of its lock key in KEYS ('0' = no lock key)
-- and answers two values per entry, in order: a status and a detail.

local function pel_verify(stream, group, id, owner, deliveries, min_idle)
  -- Still pending, same owner, not re-delivered since the plan, idle enough.
  local e = redis.call('XPENDING', stream, group, id, id, 1)[1]
  if not e then return 'not-pending', nil end
  if owner ~= '' and e[2] ~= owner then return 'owner-changed', nil end
  if deliveries > 0 and e[4] ~= deliveries then return 'redelivered', nil end
  if e[3] < min_idle then return 'not-idle', nil end
  return nil, e
end

local function lock_held(index)
  return index > 0 and redis.call('EXISTS', KEYS[index]) == 1
end

local function entry_fields(stream, id)
  local found = redis.call('XRANGE', stream, id, id)[1]
  if found then return found[2] end
  return nil
end

local function release_consumer(stream, group, name)
  -- pelctl's helper consumer is removed once it holds nothing; a consumer that holds
  -- entries is never deleted (XGROUP DELCONSUMER would drop them).
  if #redis.call('XPENDING', stream, group, '-', '+', 1, name) == 0 then
    redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
  end
end

local function server_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function add_envelope(fields, prefix, stream, group, id, e, reason, at)
  -- The dead-letter envelope (SPEC 5a): the original fields untouched, then _dlq_*.
  local out = {}
  for j = 1, #fields do out[j] = fields[j] end
  local n = #out
  out[n + 1] = prefix .. 'dlq_source';     out[n + 2] = stream
  out[n + 3] = prefix .. 'dlq_group';      out[n + 4] = group
  out[n + 5] = prefix .. 'dlq_id';         out[n + 6] = id
  out[n + 7] = prefix .. 'dlq_owner';      out[n + 8] = e[2]
  out[n + 9] = prefix .. 'dlq_deliveries'; out[n + 10] = tostring(e[4])
  out[n + 11] = prefix .. 'dlq_idle_ms';   out[n + 12] = tostring(e[3])
  out[n + 13] = prefix .. 'dlq_reason';    out[n + 14] = reason
  out[n + 15] = prefix .. 'dlq_at';        out[n + 16] = tostring(at)
  return out
end

local function put_back(stream, group, id, e)
  -- Undo a take: the entry returns to its owner with its idle time and delivery count.
  redis.call('XCLAIM', stream, group, e[2], 0, id, 'IDLE', e[3], 'RETRYCOUNT', e[4], 'JUSTID')
end

local function error_text(reply)
  if type(reply) == 'table' and reply.err then return reply.err end
  return nil
end
