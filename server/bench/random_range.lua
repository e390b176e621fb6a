-- wrk script: every request asks for a random byte range of RANGE_BYTES from a file of FILE_BYTES.
-- Both are passed after "--" on the wrk command line: wrk ... -s random_range.lua URL -- FILE_BYTES RANGE_BYTES
local file_bytes, range_bytes
local thread_counter = 0

function setup(thread)
    thread_counter = thread_counter + 1
    thread:set("seed", thread_counter * 7919)
end

function init(args)
    file_bytes = tonumber(args[1])
    range_bytes = tonumber(args[2])
    math.randomseed(seed or 1)
end

function request()
    local first = math.random(0, file_bytes - range_bytes)
    local last = first + range_bytes - 1
    return wrk.format("GET", nil, { ["Range"] = "bytes=" .. first .. "-" .. last })
end
