# socketpair and an asyncio loop, which the filter leaves alone
import asyncio, socket
a, b = socket.socketpair()
a.send(b'x')
async def main():
    await asyncio.sleep(0)
    return 'loop ran'
b.recv(1), asyncio.run(main())
