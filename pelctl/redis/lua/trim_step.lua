-- pelctl: one bounded step of a safe trim (pelctl trim --safe; docs/trim.md).
--
-- KEYS[1]  the stream
-- ARGV[1]  ceiling: never remove an entry at or above this id ('' = none): the bound the
--          plan showed (and --minid), so a step never removes more than was reviewed
-- ARGV[2]  keep: never leave fewer entries than this ('' = no floor: --maxlen)
-- ARGV[3]  the most entries this step removes with whole listpack nodes (XTRIM ~ LIMIT)
-- ARGV[4]  the most entries the exact part of a step reads and removes, one by one (when no
--          whole node can go: the rest of the first node below the bound, or nodes larger
--          than ARGV[3])
-- ARGV[5]  'ACKED' (Redis 8.2+: the server itself keeps every entry some group has not
--          read or not acknowledged) or '' (KEEPREF, the default)
--
-- The bound is computed again here, atomically with the trim: the lowest of every group's
-- next undelivered entry (just past last-delivered-id) and its oldest pending entry still in
-- the stream. A group created, or moved back with XGROUP SETID, since the plan or the last
-- step is never robbed. Below the bound every entry was read and acknowledged by every group,
-- so ACKED removes each entry it visits and LIMIT bounds the step.
--
-- Answers {status, removed, bound, group, reason}:
--   'trimmed'    removed > 0 entries
--   'done'       nothing left to remove (the first entry is at or above the bound, or the
--                stream holds only `keep` entries)
--   'no-bound'   no group, no ceiling and no keep: nothing says what may go; nothing removed
-- Every step that can remove something removes at least one entry: a loop of steps ends.

local stream = KEYS[1]
local ceiling = ARGV[1]
local keep = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local exact = tonumber(ARGV[4])
local policy = ARGV[5]

-- Stream ids as decimal strings (Lua numbers are doubles: no arithmetic on 64-bit parts).
local MAX_PART = '18446744073709551615'

local function split_id(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return ms, seq
end

local function num_lt(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

local function id_lt(a, b)
  local am, as = split_id(a)
  local bm, bs = split_id(b)
  if am ~= bm then return num_lt(am, bm) end
  return num_lt(as, bs)
end

local function incr(n)
  local digits = {}
  for i = 1, #n do digits[i] = string.byte(n, i) - 48 end
  local i = #digits
  while i > 0 do
    if digits[i] < 9 then
      digits[i] = digits[i] + 1
      break
    end
    digits[i] = 0
    i = i - 1
  end
  local out = table.concat(digits)
  if i == 0 then out = '1' .. out end
  return out
end

local function next_id(id)
  local ms, seq = split_id(id)
  if seq ~= MAX_PART then return ms .. '-' .. incr(seq) end
  if ms ~= MAX_PART then return incr(ms) .. '-0' end
  return nil
end

local function xtrim(args)
  local command = {'XTRIM', stream}
  for _, a in ipairs(args) do command[#command + 1] = a end
  if policy ~= '' then command[#command + 1] = policy end
  return redis.call(unpack(command))
end

local head = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)
if #head == 0 then return {'done', 0, '', '', 'empty'} end
local first = head[1][1]

local bound, by, why = nil, '', ''
if ceiling ~= '' then bound, why = ceiling, 'plan' end
local groups = redis.call('XINFO', 'GROUPS', stream)
for _, row in ipairs(groups) do
  local name, last
  for j = 1, #row, 2 do
    if row[j] == 'name' then name = row[j + 1]
    elseif row[j] == 'last-delivered-id' then last = row[j + 1] end
  end
  local after = next_id(last)
  -- (a tie goes to the group: it says what holds the trim better than the plan's ceiling)
  if after ~= nil and (bound == nil or not id_lt(bound, after)) then
    bound, by, why = after, name, 'undelivered'
  end
  local oldest = redis.call('XPENDING', stream, name, first, '+', 1)[1]
  if oldest ~= nil and (bound == nil or not id_lt(bound, oldest[1])) then
    bound, by, why = oldest[1], name, 'pending'
  end
end
if bound == nil and keep == nil then return {'no-bound', 0, '', '', ''} end

local allowed = nil
if keep ~= nil then
  allowed = redis.call('XLEN', stream) - keep
  if allowed <= 0 then return {'done', 0, bound or '', by, 'maxlen'} end
end
if bound ~= nil and not id_lt(first, bound) then return {'done', 0, bound, by, why} end

-- Whole listpack nodes below the bound, at most `n` entries (with ACKED, the entries of the
-- first node below the bound too).
local n = limit
if allowed ~= nil and allowed < n then n = allowed end
local removed
if bound ~= nil then
  removed = xtrim({'MINID', '~', bound, 'LIMIT', n})
else
  removed = xtrim({'MAXLEN', '~', redis.call('XLEN', stream) - n, 'LIMIT', n})
end
if removed > 0 then return {'trimmed', removed, bound or '', by, why} end

-- What is left below the bound shares the first node with later entries (or the nodes
-- hold more than `n`): at most `exact` of them, one by one (XTRIM = marks each deleted).
local m = exact
if allowed ~= nil and allowed < m then m = allowed end
if bound == nil then  -- only keep: the `m` oldest
  removed = xtrim({'MAXLEN', '=', redis.call('XLEN', stream) - m})
  if removed > 0 then return {'trimmed', removed, '', by, 'maxlen'} end
  return {'done', 0, '', by, 'maxlen'}
end
local head = redis.call('XRANGE', stream, '-', '(' .. bound, 'COUNT', m + 1)
if #head == 0 then return {'done', 0, bound, by, why} end
local cut = bound
if #head > m then cut = head[m + 1][1] end  -- the first `m` entries, all below the bound
removed = xtrim({'MINID', '=', cut})
if removed > 0 then return {'trimmed', removed, bound, by, why} end
return {'done', 0, bound, by, why}
