using System.Diagnostics;
using System.Net.Sockets;
using System.Text;

namespace Courier.Load;

/// <summary>
/// A lean MQTT 3.1.1 or 5.0 client over a raw socket, the same bytes for every broker: CONNECT, SUBSCRIBE,
/// batched PUBLISH (QoS 0, or QoS 1 in windows waiting for their PUBACKs), and a subscriber that
/// counts the PUBLISH packets it receives (answering each QoS 1 one with a PUBACK, batched per read).
/// The 5.0 packets carry empty property lists, so both brokers do the same work.
/// </summary>
internal sealed class MqttBenchClient : IDisposable
{
    private const int ReadBufferSize = 1024 * 1024; // bytes per receive: large, to keep the client cheap

    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[ReadBufferSize];
    private readonly bool _v5;

    /// <param name="port">The broker's MQTT port on 127.0.0.1.</param>
    /// <param name="clientId">The client id.</param>
    /// <param name="v5">MQTT 5.0 (protocol level 5) instead of 3.1.1.</param>
    public MqttBenchClient(int port, string clientId, bool v5 = false)
    {
        _v5 = v5;
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        _socket.Connect("127.0.0.1", port);
        var id = Encoding.ASCII.GetBytes(clientId);
        // CONNECT, clean session (5.0: clean start, no properties), keep-alive 60 s. [MQTT-3.1]
        byte[] body = v5
            ? [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 5, 0x02, 0, 60, 0, (byte)(id.Length >> 8), (byte)id.Length, .. id]
            : [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, 0x02, 0, 60, (byte)(id.Length >> 8), (byte)id.Length, .. id];
        Send([0x10, (byte)body.Length, .. body]);
        var (first, connAck) = ReadPacket();
        if (first != 0x20 || connAck.Length < 2 || connAck[1] != 0)
        {
            throw new IOException($"CONNACK refused: {Convert.ToHexString(connAck)}");
        }
    }

    /// <summary>SUBSCRIBE to <paramref name="filter"/> at <paramref name="qos"/> and wait for its SUBACK.</summary>
    public void Subscribe(string filter, byte qos)
    {
        var f = Encoding.ASCII.GetBytes(filter);
        byte[] body = _v5 ? [0, 1, 0, (byte)(f.Length >> 8), (byte)f.Length, .. f, qos] : [0, 1, (byte)(f.Length >> 8), (byte)f.Length, .. f, qos];
        Send([0x82, (byte)body.Length, .. body]);
        var (first, subAck) = ReadPacket();
        if (first != 0x90 || subAck[^1] != qos)
        {
            throw new IOException($"SUBACK refused: {Convert.ToHexString(subAck)}");
        }
    }

    /// <summary>One PUBLISH packet's bytes (packet id 0 for QoS 0); <paramref name="v5"/>: with an empty property list.</summary>
    public static byte[] Publish(string topic, int size, byte qos, ushort packetId = 0, bool v5 = false)
    {
        var t = Encoding.ASCII.GetBytes(topic);
        var remaining = 2 + t.Length + (qos > 0 ? 2 : 0) + (v5 ? 1 : 0) + size;
        var packet = new List<byte>(remaining + 5) { (byte)(0x30 | (qos << 1)) };
        var length = remaining;
        do
        {
            var digit = (byte)(length % 128);
            length /= 128;
            packet.Add(length > 0 ? (byte)(digit | 0x80) : digit);
        }
        while (length > 0);

        packet.Add((byte)(t.Length >> 8));
        packet.Add((byte)t.Length);
        packet.AddRange(t);
        if (qos > 0)
        {
            packet.Add((byte)(packetId >> 8));
            packet.Add((byte)packetId);
        }

        if (v5)
        {
            packet.Add(0); // no properties [MQTT-3.3.2.3]
        }

        packet.AddRange(new byte[size]);
        return [.. packet];
    }

    public void Send(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            bytes = bytes[_socket.Send(bytes)..];
        }
    }

    /// <summary>Sends a window of QoS 1 PUBLISHes (ids already in <paramref name="window"/>) and reads their <paramref name="count"/> PUBACKs.</summary>
    public void PublishWindow(ReadOnlySpan<byte> window, int count)
    {
        Send(window);
        if (!_v5)
        {
            ReadExactly(4 * count); // PUBACK: 0x40 0x02 id id
            return;
        }

        for (var i = 0; i < count; i++)
        {
            ReadPacket(); // 5.0 PUBACK: 0x40 0x02 id id, or with a reason code and properties after
        }
    }

    // One packet the broker sent: its first byte and its body (acknowledgements: small).
    private (byte First, byte[] Body) ReadPacket()
    {
        var first = ReadExactly(1)[0];
        var remaining = 0;
        var multiplier = 1;
        for (var i = 0; i < 4; i++)
        {
            var digit = ReadExactly(1)[0];
            remaining += (digit & 0x7F) * multiplier;
            multiplier *= 128;
            if ((digit & 0x80) == 0)
            {
                return (first, ReadExactly(remaining));
            }
        }

        throw new IOException("malformed remaining length from the broker");
    }

    /// <summary>
    /// Counts PUBLISH packets until <paramref name="expected"/> arrived, or nothing came for
    /// <paramref name="idle"/> (a broker that dropped some), or <paramref name="limit"/> passed.
    /// QoS 1 ones are acknowledged. Returns how many arrived and when the last one did.
    /// </summary>
    public (long Received, TimeSpan LastAt) Receive(long expected, Stopwatch clock, TimeSpan idle, TimeSpan limit)
    {
        long received = 0;
        var lastAt = TimeSpan.Zero;
        var acks = new byte[ReadBufferSize / 4];
        var start = 0;
        var end = 0;
        _socket.ReceiveTimeout = (int)idle.TotalMilliseconds;
        while (received < expected && clock.Elapsed < limit)
        {
            if (end == _buffer.Length)
            {
                Buffer.BlockCopy(_buffer, start, _buffer, 0, end - start);
                end -= start;
                start = 0;
            }

            int n;
            try
            {
                n = _socket.Receive(_buffer, end, _buffer.Length - end, SocketFlags.None);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
            {
                break; // idle: the broker dropped the rest
            }

            if (n == 0)
            {
                throw new IOException("broker closed the connection");
            }

            end += n;
            var ackLength = 0;
            while (TryPacket(_buffer.AsSpan(start, end - start), out var first, out var headerLength, out var remaining))
            {
                if ((first & 0xF0) == 0x30)
                {
                    received++;
                    if ((first & 0x06) != 0)
                    {
                        // PUBLISH QoS 1: the packet id follows the topic. PUBACK [MQTT-3.4]
                        var topicLength = (_buffer[start + headerLength] << 8) | _buffer[start + headerLength + 1];
                        var id = start + headerLength + 2 + topicLength;
                        if (ackLength + 4 > acks.Length)
                        {
                            Send(acks.AsSpan(0, ackLength));
                            ackLength = 0;
                        }

                        acks[ackLength++] = 0x40;
                        acks[ackLength++] = 0x02;
                        acks[ackLength++] = _buffer[id];
                        acks[ackLength++] = _buffer[id + 1];
                    }
                }

                start += headerLength + remaining;
            }

            if (ackLength > 0)
            {
                Send(acks.AsSpan(0, ackLength));
            }

            if (start == end)
            {
                start = end = 0;
            }

            lastAt = clock.Elapsed;
        }

        return (received, lastAt);
    }

    private static bool TryPacket(ReadOnlySpan<byte> data, out byte first, out int headerLength, out int remaining)
    {
        first = 0;
        headerLength = 0;
        remaining = 0;
        if (data.Length < 2)
        {
            return false;
        }

        first = data[0];
        var multiplier = 1;
        for (var i = 1; i < 5; i++)
        {
            if (i >= data.Length)
            {
                return false;
            }

            remaining += (data[i] & 0x7F) * multiplier;
            multiplier *= 128;
            if ((data[i] & 0x80) == 0)
            {
                headerLength = i + 1;
                return data.Length >= headerLength + remaining;
            }
        }

        throw new IOException("malformed remaining length from the broker");
    }

    private byte[] ReadExactly(int count)
    {
        var result = new byte[count];
        var read = 0;
        while (read < count)
        {
            var n = _socket.Receive(result, read, count - read, SocketFlags.None);
            if (n == 0)
            {
                throw new IOException("broker closed the connection");
            }

            read += n;
        }

        return result;
    }

    public void Dispose()
    {
        try
        {
            Send([0xE0, 0x00]); // DISCONNECT
        }
        catch (SocketException)
        {
        }

        _socket.Dispose();
    }
}
