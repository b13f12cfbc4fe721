# raising the address space, file size and descriptor limits is refused
import resource
res = []
for lim in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE):
    try:
        resource.setrlimit(lim, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        res.append('raised')
    except (ValueError, OSError) as e:
        res.append(type(e).__name__)
res, resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_FSIZE)
