--[[
  Records which node holds a lease just acquired, only while the lease still carries our token (a lease
  that expired in between must not get an owner key pointing at us).

  Input:
    KEYS[1]  lease key
    KEYS[2]  owner key
    ARGV[1]  the lease token
    ARGV[2]  this node's id
    ARGV[3]  TTL in milliseconds

  Output:
    1 = recorded, 0 = the lease is not ours (any more)
]]
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
return 1
