# pidfd_open of HOST_PID, then pidfd_send_signal of SIGKILL, by number (after sc)
import signal
pidfd = sc(434, HOST_PID, 0)
sc(424, pidfd, int(signal.SIGKILL), 0, 0)
