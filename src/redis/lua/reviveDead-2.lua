--[[
  Queues an instance's dead letters again with fresh attempts: all of them, or those whose ids are given.

  Input:
    KEYS[1]  the instance's dead-letter list
    KEYS[2]  the delivery stream
    ARGV[1]  JSON array of delivery ids, or "*" for all

  Output:
    how many were queued again
]]
local wanted = nil
if ARGV[1] ~= "*" then
  wanted = {}
  for _, id in ipairs(cjson.decode(ARGV[1])) do wanted[id] = true end
end
local all = redis.call("LRANGE", KEYS[1], 0, -1)
local keep = {}
local revived = 0
-- The list is newest first: walk it backwards to queue the oldest first.
for i = #all, 1, -1 do
  local letter = cjson.decode(all[i])
  if wanted == nil or wanted[letter.id] then
    letter.attempts = 0
    letter.failedAt = nil
    letter.receipt = nil
    redis.call("XADD", KEYS[2], "*", "d", cjson.encode(letter))
    revived = revived + 1
  else
    table.insert(keep, 1, all[i])
  end
end
redis.call("DEL", KEYS[1])
if #keep > 0 then
  redis.call("RPUSH", KEYS[1], unpack(keep))
end
return revived
