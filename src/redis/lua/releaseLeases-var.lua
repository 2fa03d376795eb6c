--[[
  Releases many leases at once, each only if this node still holds it.

  Input:
    KEYS[2i-1]  lease key of lease i
    KEYS[2i]    owner key of lease i
    ARGV[i]     the lease token of lease i

  Output:
    the number of leases released
]]
local released = 0
for i = 1, #KEYS / 2 do
  local lease = KEYS[2 * i - 1]
  if redis.call("GET", lease) == ARGV[i] then
    redis.call("DEL", lease, KEYS[2 * i])
    released = released + 1
  end
end
return released
