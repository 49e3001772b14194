-- pelctl: helpers shared by the per-entry repair scripts (prepended to each script).
--
-- Every entry script receives, after its own header arguments, five arguments per entry:
--   id, expected owner ('' = any), expected delivery count ('0' = any),
--   min idle ms, index of its lock key in KEYS ('0' = no lock key)
-- and answers two values per entry, in order: a status and a detail.

-- The most values one command can take from a table: Redis and Valkey run Lua 5.1, whose
-- unpack() fails beyond LUAI_MAXCSTACK - 1 = 7,999 values ("too many results to unpack"),
-- and a script has no other way to pass a variable number of arguments. Measured on
-- redis-server 7.0.15 and valkey-server 8.0.1; the same number is LUA_UNPACK_MAX in
-- pelctl/redis/scripts.py (a test compares them). An XADD needing more values (an entry of
-- about 4,000 fields) cannot be written by a script: the scripts answer 'wide' for it
-- before any write, and the client moves it by the ordered path.
local UNPACK_MAX = 7999

-- Payload bytes one call copies before it leaves the rest of its batch for the next call:
-- the scripts that copy entries answer 'later' (nothing done) for each entry met once the
-- budget is spent, and the client sends those again. A batch of entries with 1 MiB values
-- would otherwise hold the server for most of a second (about 8 ms per MiB copied, measured
-- on redis-server 7.0.15); narrow entries never reach it.
local CALL_BYTES = 1048576
local spent = 0

local function budget_spent()
  return spent >= CALL_BYTES
end

local function spend(fields)
  for j = 1, #fields do spent = spent + #fields[j] end
end

local function error_text(reply)
  if type(reply) == 'table' and reply.err then return reply.err end
  if type(reply) == 'table' then return 'error' end
  return tostring(reply)
end

-- One entry's work, isolated: a Lua error in it (a redis.call that raised, or a bug) is that
-- entry's 'fail' and the batch goes on. No script takes an entry from its owner (each copies
-- and acknowledges within one script, or leases it to its own owner), so there is nothing to
-- put back: undoing a take with XCLAIM ... IDLE would also re-insert the entry in the middle
-- of Redis 8.4+'s time-ordered PEL, walking it (seconds on a million entries).
local function each(work, i)
  local ok, status, detail = pcall(work, i)
  if ok then return status, detail end
  return 'fail', error_text(status)
end

-- -- Read-ahead: one range read answers the next entries' lookups --------------------------
-- A lookup of one id (XPENDING id id 1, XRANGE id id) walks the radix tree and the listpack
-- node it lands in, about as much as a read of the next few dozen entries in one range: on
-- redis-server 7.0.15, per entry, 4.9 us against 1.8 us for XPENDING and 8.6 us against 1.9 us
-- for XRANGE. So a lookup that finds nothing read ahead reads a window from its id to the
-- batch's last id (`ahead_last`; run_entries sets it), and the next entries are found there.
--
-- What the window holds is what a lookup of one id would return: each row is used at most once
-- (taken out when used: an id twice in a batch is looked up again), and a script changes no
-- entry but the one it is working on, so a row read ahead has not changed since. An id not
-- found at the start of its own window (no longer pending, deleted, or written in another
-- form) is looked up alone, as before, and that answer stands.
--
-- Windows start at AHEAD_FIRST rows and double while each one comes back full, small and
-- three quarters used (AHEAD_MAX rows at most). One of which half or less was used halves
-- the next: a plan whose entries lie far apart (a few idle ones among many busy ones) or a
-- plan gone stale reads alone after two windows. One holding more than AHEAD_BYTES stops them
-- for the rest of the call (entries with big values are read one by one, so the call's byte
-- budget still stops it after about CALL_BYTES). So does a window the server refuses (an id
-- it cannot read, as the first or the last): each id is then looked up alone, and only a bad
-- one fails.
local AHEAD_FIRST, AHEAD_MAX, AHEAD_BYTES = 4, 64, 65536
local ahead_last = '+'

local function ahead(read, bytes_of)
  -- A read-ahead over read(key, group, id, last, n): lookup(key, group, id) returns the row
  -- of `id` and true when a window found it (the row can be nil only with false); forget(id) drops a row
  -- of an id looked up alone (the one being worked on), so no later lookup sees it as it was.
  local rows, size = {}, AHEAD_FIRST
  local last_n, used, small = 0, 0, true  -- the last window: rows, rows used, few bytes
  local function lookup(key, group, id)
    local row = rows[id]
    if row ~= nil then
      rows[id] = nil
      used = used + 1
      return row, true
    end
    if size < 2 then return nil, false end
    if last_n > 0 then  -- sized by how much of the last window was used
      if used * 2 <= last_n then
        size = math.floor(size / 2)
        if size < 2 then return nil, false end
      elseif used * 4 >= last_n * 3 and last_n == size and small then
        size = math.min(size * 2, AHEAD_MAX)
      end
    end
    local got = read(key, group, id, ahead_last, size)
    if type(got) ~= 'table' or got.err then  -- (an id the server cannot read: alone from now)
      size = 0
      return nil, false
    end
    local bytes, found = 0, nil
    for k = 1, #got do
      local r = got[k]
      bytes = bytes + bytes_of(r)
      if k == 1 and r[1] == id then found = r else rows[r[1]] = r end
    end
    last_n, used, small = #got, found and 1 or 0, bytes * 4 <= AHEAD_BYTES
    if bytes > AHEAD_BYTES then size = 0 end
    return found, found ~= nil
  end
  local function forget(id)
    rows[id] = nil
  end
  return lookup, forget
end

local pending_ahead, pending_forget = ahead(
  function(key, group, id, last, n) return redis.pcall('XPENDING', key, group, id, last, n) end,
  function(row) return #row[1] + #row[2] end)

local entries_ahead, entries_forget = ahead(
  function(key, _, id, last, n) return redis.pcall('XRANGE', key, id, last, 'COUNT', n) end,
  function(row)
    local bytes = #row[1]
    for j = 1, #row[2] do bytes = bytes + #row[2][j] end
    return bytes
  end)

local function pending_row(stream, group, id)
  -- The entry's XPENDING row {id, owner, idle ms, deliveries}, or nil: it is not pending.
  local row, found = pending_ahead(stream, group, id)
  if found then return row end
  row = redis.call('XPENDING', stream, group, id, id, 1)[1]
  if row then pending_forget(row[1]) end
  return row
end

local function pel_verify(stream, group, id, owner, deliveries, min_idle)
  -- Still pending, same owner, not re-delivered since the plan, idle enough.
  local e = pending_row(stream, group, id)
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
  local row, found = entries_ahead(stream, nil, id)
  if found then return row[2] end
  row = redis.call('XRANGE', stream, id, id)[1]
  if not row then return nil end
  entries_forget(row[1])
  return row[2]
end

local function preflight(...)
  -- Before any write: a harmless form of a command that must not fail after a copy is
  -- written (XACK of 0-0 acknowledges nothing, XDEL of 0-0 deletes nothing). An ACL that
  -- refuses it fails the whole call here, with nothing written.
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then error(r) end
end

local function can_ack(stream, group)
  preflight('XACK', stream, group, '0-0')
end

local function server_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- -- The copies: the one place that decides a copy's fields ---------------------------------
-- Used by the one-script paths (requeue.lua, dlq_move.lua) and by the ordered path
-- (lease.lua returns the copy for the client to write), so both write the same bytes. Each
-- appends the copy to a table (the XADD's arguments, or the lease's reply): one table per
-- entry, no copying.

-- Counts at or past it read as 0: a sum of two stays below 1e14, which tostring() (%.14g)
-- still prints as an integer. The same number is COUNT_LIMIT in pelctl/core/lineage.py.
local COUNT_LIMIT = 1e12

local function count(value)
  -- A lineage count from its field value: tonumber() with the fraction dropped; anything
  -- else (not a number, negative, too big) is 0. Python twin: pelctl.core.lineage.count.
  local n = tonumber(value)
  if not n or n ~= n or n < 0 or n >= COUNT_LIMIT then return 0 end
  return math.floor(n)
end

local function requeue_copy(out, fields, prefix, id, deliveries, lineage)
  -- Appends to `out` the requeued copy (SPEC 5a; docs/formats.md): the fields without the
  -- lineage fields, then <prefix>retry_count = retries + 1, <prefix>prior_deliveries =
  -- prior + deliveries (this entry's PEL count) and <prefix>original_id (the first entry's
  -- id, kept through every hop). Without lineage (--no-lineage): the fields exactly.
  -- Returns the retries so far (0 without lineage). Python twin (servers without Lua):
  -- pelctl.core.lineage.requeue_copy; a test compares the bytes both write.
  local n = #out
  if not lineage then
    for j = 1, #fields do out[n + j] = fields[j] end
    return 0
  end
  local RETRY, PRIOR = prefix .. 'retry_count', prefix .. 'prior_deliveries'
  local ORIGINAL = prefix .. 'original_id'
  local retries, prior, original = 0, 0, id
  for j = 1, #fields, 2 do
    local k = fields[j]
    if k == RETRY then
      retries = count(fields[j + 1])
    elseif k == PRIOR then
      prior = count(fields[j + 1])
    elseif k == ORIGINAL then
      original = fields[j + 1]
    else
      out[n + 1] = k
      out[n + 2] = fields[j + 1]
      n = n + 2
    end
  end
  out[n + 1] = RETRY;    out[n + 2] = tostring(retries + 1)
  out[n + 3] = PRIOR;    out[n + 4] = tostring(prior + deliveries)
  out[n + 5] = ORIGINAL; out[n + 6] = original
  return retries
end

local function add_envelope(out, fields, prefix, stream, group, id, e, reason, at)
  -- Appends to `out` the dead letter (SPEC 5a): the original fields untouched, then _dlq_*.
  -- The original fields keep their lineage fields: a dead letter's lineage is read from them
  -- and the envelope (pelctl.core.lineage.of_dead_letter). Python twin (servers without
  -- Lua): pelctl.core.dlq.envelope.write (a test compares the bytes both write).
  local n = #out
  for j = 1, #fields do out[n + j] = fields[j] end
  n = n + #fields
  out[n + 1] = prefix .. 'dlq_source';     out[n + 2] = stream
  out[n + 3] = prefix .. 'dlq_group';      out[n + 4] = group
  out[n + 5] = prefix .. 'dlq_id';         out[n + 6] = id
  out[n + 7] = prefix .. 'dlq_owner';      out[n + 8] = e[2]
  out[n + 9] = prefix .. 'dlq_deliveries'; out[n + 10] = tostring(e[4])
  out[n + 11] = prefix .. 'dlq_idle_ms';   out[n + 12] = tostring(e[3])
  out[n + 13] = prefix .. 'dlq_reason';    out[n + 14] = reason
  out[n + 15] = prefix .. 'dlq_at';        out[n + 16] = tostring(at)
end

local function retry_reason(reason, max_retries)
  if reason == '' then return 'max retries exceeded (' .. max_retries .. ')' end
  return reason
end

local function fits(args)
  return #args <= UNPACK_MAX
end

local function xadd(args)
  -- XADD that never raises: an error (or a call too wide for a script) is returned.
  if not fits(args) then return {err = 'WIDE ' .. #args .. ' XADD arguments'} end
  return redis.pcall('XADD', unpack(args))
end

-- -- Every entry script's per-entry verify, take and loop -------------------------------------
-- The one place each is written: claim, ack, requeue, dlq_move and lease call them.

local function verify_entry(stream, group, i, refuse)
  -- The per-entry verify, on the entry's five arguments ARGV[i .. i + 4]: still pending, same
  -- owner, not re-delivered since the plan, idle enough (pel_verify), then `refuse` (if
  -- given: a reason of the script's own, from the XPENDING row, or nil), then its lock key
  -- not held ('alive'). Returns id, min_idle, the XPENDING row; or nil, 'skip', <reason>.
  local id, min_idle = ARGV[i], tonumber(ARGV[i + 3])
  local why, e = pel_verify(stream, group, id, ARGV[i + 1], tonumber(ARGV[i + 2]), min_idle)
  if not why and refuse then why = refuse(e) end
  if not why and lock_held(tonumber(ARGV[i + 4])) then why = 'alive' end
  if why then return nil, 'skip', why end
  return id, min_idle, e
end

local function verify_copy(stream, group, i)
  -- verify_entry for the scripts that copy entries, then the entry's fields (spent from the
  -- call's byte budget). Returns id, min_idle, the XPENDING row, the fields; or nil and the
  -- entry's answer: 'later' '' (the budget was spent before it: nothing done), 'skip'
  -- <reason>, or 'ghost' '' (deleted from the stream: its PEL reference acknowledged).
  if budget_spent() then return nil, 'later', '' end
  local id, min_idle, e = verify_entry(stream, group, i)
  if not id then return nil, min_idle, e end
  local fields = entry_fields(stream, id)
  if not fields then
    redis.call('XACK', stream, group, id)
    return nil, 'ghost', ''
  end
  spend(fields)
  return id, min_idle, e, fields
end

local function copy_then_ack(stream, group, id, args)
  -- XADD `args`, and only then XACK the entry verify_entry has just checked in this script
  -- (still pending, same owner, same delivery count, idle at least its min-idle: the check
  -- an XCLAIM with min-idle would make, on the same PEL row). Nothing runs between the
  -- check, the copy and the ack, so no take (XCLAIM to a helper consumer) is needed: there
  -- is no moment at which the entry is acknowledged but not copied, and an XADD that fails
  -- leaves the entry exactly as it was (nothing to put back). Returns 'copied' <new id> |
  -- 'fail' <error>.
  local added = xadd(args)
  if type(added) == 'table' and added.err then return 'fail', added.err end
  -- XACK of a pending entry, in a group that exists (can_ack checked the ACL): it cannot fail.
  redis.call('XACK', stream, group, id)
  return 'copied', added
end

local function replay_copy(target, create, id, first, n, marker_field)
  -- The XADD arguments of a replayed copy: the n prepared field/value strings from
  -- ARGV[first], then the marker field and the dead-letter id (none when the marker field is
  -- '': --no-lineage); NOMKSTREAM unless `create` is '1'. dlq_replay and dlq_replay_add.
  local args = {target}
  if create ~= '1' then args[#args + 1] = 'NOMKSTREAM' end
  args[#args + 1] = '*'
  for j = first, first + n - 1 do args[#args + 1] = ARGV[j] end
  if marker_field ~= '' then
    args[#args + 1] = marker_field
    args[#args + 1] = id
  end
  return args
end

local function run_entries(work, first, step)
  -- work(i) for each entry, its arguments from ARGV[first]: `step` apart (a number, or a
  -- function of i for entries of variable width), each isolated (each()). The reply: a status
  -- and a detail per entry, in order.
  local out, i = {}, first
  if type(step) == 'number' and #ARGV >= first then
    ahead_last = ARGV[first + step * math.floor((#ARGV - first) / step)]
  end
  while i <= #ARGV do
    local status, detail = each(work, i)
    out[#out + 1] = status
    out[#out + 1] = detail
    if type(step) == 'function' then i = i + step(i) else i = i + step end
  end
  return out
end
