using System.Buffers.Binary;
using Courier.Actors.Connections;
using Courier.Protocols.WebSocket;
using Xunit;

namespace Courier.Actors.Tests.Connections;

/// <summary>
/// A WebSocket client's receive buffer: 4 KB while the client is quiet, 64 KB once a read fills it, and
/// 4 KB again when it goes idle after a run of short reads; the bytes come out intact throughout.
/// </summary>
public sealed class WebSocketStreamTests
{
    [Fact]
    public async Task The_receive_buffer_grows_for_a_large_message_and_shrinks_when_the_client_goes_quiet()
    {
        var transport = new ChunkedStream();
        var upgrade = WebSocketUpgradeResult.Accept(new WebSocketHandshakeRequest("GET", "/", "HTTP/1.1", []), "dGhlIHNhbXBsZSBub25jZQ==", WebSocketKind.Client, compress: false, cookieJwt: null);
        await using var stream = new WebSocketStream(transport, socket: null, upgrade, maxMessage: 1024 * 1024);
        Assert.Equal(4 * 1024, stream.ReceiveBufferLength);

        // A 200 KB message, arriving as fast as the buffer can take it.
        var large = new byte[200_000];
        new Random(9).NextBytes(large);
        transport.Add(MaskedFrame(large));
        Assert.Equal(large, await ReadExactlyAsync(stream, large.Length));
        Assert.Equal(64 * 1024, stream.ReceiveBufferLength);

        // Then 16 small messages, each in its own read: still 64 KB until the client goes idle.
        for (var i = 0; i < 16; i++)
        {
            var small = new byte[100];
            small.AsSpan().Fill((byte)i);
            transport.Add(MaskedFrame(small));
            Assert.Equal(small, await ReadExactlyAsync(stream, small.Length));
        }

        Assert.Equal(64 * 1024, stream.ReceiveBufferLength);
        Assert.Equal(0, await stream.ReadAsync(Memory<byte>.Empty)); // the pipe's idle wait
        Assert.Equal(4 * 1024, stream.ReceiveBufferLength);

        // And it still reads what comes next.
        transport.Add(MaskedFrame("PING\r\n"u8.ToArray()));
        Assert.Equal("PING\r\n"u8.ToArray(), await ReadExactlyAsync(stream, 6));
    }

    private static async Task<byte[]> ReadExactlyAsync(Stream stream, int count)
    {
        var buffer = new byte[count];
        var filled = 0;
        while (filled < count)
        {
            var read = await stream.ReadAsync(buffer.AsMemory(filled, Math.Min(64 * 1024, count - filled)));
            Assert.True(read > 0, "the stream ended early");
            filled += read;
        }

        return buffer;
    }

    private static byte[] MaskedFrame(byte[] payload)
    {
        byte[] key = [0x11, 0x22, 0x33, 0x44];
        var header = new List<byte> { 0x82 }; // FIN, binary
        if (payload.Length <= 125)
        {
            header.Add((byte)(0x80 | payload.Length));
        }
        else if (payload.Length <= ushort.MaxValue)
        {
            header.AddRange([0x80 | 126, (byte)(payload.Length >> 8), (byte)payload.Length]);
        }
        else
        {
            var length = new byte[8];
            BinaryPrimitives.WriteUInt64BigEndian(length, (ulong)payload.Length);
            header.Add(0x80 | 127);
            header.AddRange(length);
        }

        header.AddRange(key);
        var frame = header.ToArray().Concat(payload.Select((b, i) => (byte)(b ^ key[i % 4]))).ToArray();
        return frame;
    }

    /// <summary>A transport whose reads return as much of the queued bytes as asked for; an empty read returns at once.</summary>
    private sealed class ChunkedStream : Stream
    {
        private readonly Queue<byte> _bytes = new();

        public void Add(byte[] bytes)
        {
            foreach (var b in bytes)
            {
                _bytes.Enqueue(b);
            }
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            var count = Math.Min(buffer.Length, _bytes.Count);
            for (var i = 0; i < count; i++)
            {
                buffer.Span[i] = _bytes.Dequeue();
            }

            return ValueTask.FromResult(count);
        }

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Flush()
        {
        }

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count)
        {
        }
    }
}
