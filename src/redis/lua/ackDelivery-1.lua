--[[
  Completes a delivery taken from the stream.

  Input:
    KEYS[1]  the delivery stream
    ARGV[1]  consumer group
    ARGV[2]  stream entry id

  Output:
    1 = acknowledged and removed, 0 = it was not pending any more (another node took it over)
]]
local acked = redis.call("XACK", KEYS[1], ARGV[1], ARGV[2])
redis.call("XDEL", KEYS[1], ARGV[2])
return acked
