--[[
  Counts requests in a fixed-window bucket shared by every node: one request, or a node's batch of them.

  Input:
    KEYS[1]  the bucket's counter key (sb:rate:<bucket>)
    ARGV[1]  window length in milliseconds
    ARGV[2]  how many requests to count (optional, default 1)

  Output:
    { count after these requests, milliseconds until the window resets }
]]
local increment = tonumber(ARGV[2] or "1")
local count = redis.call("INCRBY", KEYS[1], increment)
if count == increment then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
local ttl = redis.call("PTTL", KEYS[1])
if ttl < 0 then
  -- A counter left without expiry (an interrupted first hit) must not block the bucket forever.
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
