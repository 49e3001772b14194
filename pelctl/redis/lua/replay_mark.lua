-- pelctl dlq replay of an entry too wide for a script (UNPACK_MAX, see the prelude). The
-- client sends, in one MULTI/EXEC on the target's node, under WATCH of the marker set:
--
--   XADD target [NOMKSTREAM] * <fields> <marker field> <dead-letter id>
--   EVALSHA replay_mark target markers mark ...
--
-- Nothing runs between the two, so the target's newest entry is the copy exactly when the
-- XADD succeeded: only then is the dead-letter id recorded in the marker set. The copy and
-- its marker exist together or not at all; the client deletes the dead letter afterwards
-- (a rerun after a crash finds the marker and only deletes, like dlq_replay_add.lua).
--
-- Without a marker field (--no-lineage: the copy is the original fields alone) the newest
-- entry is recognised by what the client knows of the copy: it is newer than the target's
-- newest entry the client read before the transaction (after the WATCH), and it holds
-- exactly the copy's fields (their count, and the SHA1 of every field prefixed by its
-- length). A failed XADD leaves as the newest entry one written before the transaction:
-- only a producer writing the very same fields in that moment could pass for the copy.
--
-- Inside MULTI/EXEC nothing can stop the XADD once queued, so the client first calls this
-- script with 'check': it tries harmless forms of every command the 'mark' call makes (an
-- ACL could refuse one) and answers the first refusal, before anything is written.
--
-- KEYS[1] target stream, KEYS[2] marker set
-- ARGV: check | mark, marker field ('': none), dead-letter id, retention ms; with no marker
--       field also: the copy's field count, its digest, the newest id seen before ('': none)
-- Reply: {ok, ''} | {denied, <error>} (check);
--        {replayed, <new id>} | {none, ''} (mark: the XADD wrote nothing)
local target, markers = KEYS[1], KEYS[2]
local mode, marker_field, id, retention = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

if mode == 'check' then
  local tries = {
    {'XREVRANGE', target, '+', '-', 'COUNT', 0},
    {'TIME'},
    {'ZREMRANGEBYSCORE', markers, '-inf', '-inf'},  -- a marker's score is a time, never -inf
    {'ZADD', markers, 'XX', 0, 'pelctl-preflight'},  -- XX: never adds; no such member
    {'PEXPIRE', markers, retention},  -- the TTL the mark sets anyway (none if missing)
  }
  for _, try in ipairs(tries) do
    local r = redis.pcall(unpack(try))
    if type(r) == 'table' and r.err then return {'denied', r.err} end
  end
  return {'ok', ''}
end

local function digest(fields)
  -- Python twin: pelctl.core.dlq.copies.fields_digest.
  local parts = {}
  for j = 1, #fields do parts[j] = #fields[j] .. ':' .. fields[j] end
  return redis.sha1hex(table.concat(parts, ','))
end

local function after(a, b)
  -- Stream id a is greater than b ('' is below every id). Parts compared as decimal text:
  -- they can pass 2^53, where Lua's numbers lose precision.
  if b == '' then return true end
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if not am or not bm then return false end
  if am ~= bm then
    if #am ~= #bm then return #am > #bm end
    return am > bm
  end
  if #as ~= #bs then return #as > #bs end
  return as > bs
end

local ok, last = pcall(redis.call, 'XREVRANGE', target, '+', '-', 'COUNT', 1)
if not ok or type(last) ~= 'table' or not last[1] then return {'none', ''} end
local fields = last[1][2]
local n = #fields
if marker_field ~= '' then
  if n < 2 or fields[n - 1] ~= marker_field or fields[n] ~= id then return {'none', ''} end
elseif n ~= tonumber(ARGV[5]) or not after(last[1][1], ARGV[7]) or digest(fields) ~= ARGV[6] then
  return {'none', ''}
end
-- Every command below was tried by 'check' before the transaction: none can be refused.
local now = server_ms()
redis.call('ZREMRANGEBYSCORE', markers, '-inf', '(' .. (now - retention))
redis.call('ZADD', markers, now, id)
redis.call('PEXPIRE', markers, retention)
return {'replayed', last[1][1]}
