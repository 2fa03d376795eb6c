--[[
  Moves retries that are due back into the delivery stream.

  Input:
    KEYS[1]  the retry set
    KEYS[2]  the delivery stream
    ARGV[1]  now (Unix ms)
    ARGV[2]  at most this many

  Output:
    how many were moved
]]
local due = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[2]))
for _, payload in ipairs(due) do
  redis.call("XADD", KEYS[2], "*", "d", payload)
  redis.call("ZREM", KEYS[1], payload)
end
return #due
