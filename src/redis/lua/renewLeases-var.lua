--[[
  Extends many leases at once, each only if this node still holds it.

  Input:
    KEYS[2i-1]  lease key of lease i           (sb:lease:{resource})
    KEYS[2i]    owner key of lease i           (sb:owner:{resource})
    ARGV[1]     TTL in milliseconds
    ARGV[2]     this node's id (the owner key's value)
    ARGV[2+i]   the lease token of lease i

  Output:
    an array with one entry per lease: 1 = extended, 0 = lost (absent, or held with another token)
]]
local ttl = ARGV[1]
local node = ARGV[2]
local results = {}
for i = 1, #KEYS / 2 do
  local lease = KEYS[2 * i - 1]
  local owner = KEYS[2 * i]
  if redis.call("GET", lease) == ARGV[2 + i] then
    redis.call("PEXPIRE", lease, ttl)
    redis.call("SET", owner, node, "PX", ttl)
    results[i] = 1
  else
    results[i] = 0
  end
end
return results
