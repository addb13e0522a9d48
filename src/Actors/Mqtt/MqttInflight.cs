using System.Buffers;
using System.Diagnostics;
using Courier.Actors.Connections;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Mqtt;

/// <summary>
/// QoS 1 deliveries to one MQTT client that wait for their PUBACK: at most <c>max_ack_pending</c>
/// in flight (the others wait, in order, for a PUBACK to free a slot), each sent again with DUP
/// after <c>ack_wait</c> until acknowledged. [MQTT-4.3.2], [MQTT-3.3.1-1]
/// </summary>
/// <remarks>
/// Each entry keeps the whole PUBLISH frame in a buffer rented from <see cref="ArrayPool{T}"/> and
/// returned at its PUBACK, so steady state allocates nothing. The lock is taken by publishers
/// delivering, the read pump (PUBACK) and the connection actor's redelivery tick; it is held while
/// a frame is queued on the outbound (so frames leave in the order they were admitted): this lock,
/// then <c>Outbound._lock</c>, never the other way (LOCKS.md).
/// </remarks>
internal sealed class MqttInflight
{
    private readonly Lock _lock = new();
    private readonly Dictionary<ushort, Entry> _inflight = [];
    private readonly Queue<Entry> _waiting = new();
    private readonly List<ushort> _expired = [];
    private readonly Outbound _outbound;
    private readonly int _maxInflight;
    private ushort _lastId;
    private bool _closed;

    public MqttInflight(Outbound outbound, int maxAckPending)
    {
        _outbound = outbound;
        _maxInflight = maxAckPending <= 0 ? ushort.MaxValue : Math.Min(maxAckPending, ushort.MaxValue);
    }

    /// <summary>Deliveries sent and not yet acknowledged.</summary>
    public int InflightCount
    {
        get
        {
            lock (_lock)
            {
                return _inflight.Count;
            }
        }
    }

    /// <summary>
    /// Sends (or queues behind the window) a QoS 1 PUBLISH of <paramref name="body"/> on
    /// <paramref name="topic"/>. Returns false when the client is gone or the outbound refused it.
    /// </summary>
    public bool Send(ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> body, bool retain)
    {
        var bodyLength = (int)body.Length;
        var headerLength = MqttPacketWriter.PublishHeaderLength(topic.Length, 1, bodyLength);
        var frame = ArrayPool<byte>.Shared.Rent(headerLength + bodyLength);
        MqttPacketWriter.WritePublishHeader(frame, topic, 1, retain, dup: false, packetId: 1, bodyLength); // id set when sent
        body.CopyTo(frame.AsSpan(headerLength));
        var entry = new Entry(frame, headerLength + bodyLength, headerLength - 2, 0);
        lock (_lock)
        {
            if (_closed)
            {
                ArrayPool<byte>.Shared.Return(frame);
                return false;
            }

            if (_inflight.Count < _maxInflight && _waiting.Count == 0)
            {
                return SendLocked(entry);
            }

            _waiting.Enqueue(entry);
            return true;
        }
    }

    /// <summary>A PUBACK: frees its slot and sends what waited for one. Returns whether anything was sent.</summary>
    public bool Acknowledge(ushort packetId)
    {
        lock (_lock)
        {
            if (!_inflight.Remove(packetId, out var acked))
            {
                return false; // unknown or already acknowledged: nothing to do, as nats-server
            }

            ArrayPool<byte>.Shared.Return(acked.Frame);
            var sent = false;
            while (!_closed && _inflight.Count < _maxInflight && _waiting.TryDequeue(out var next))
            {
                sent |= SendLocked(next);
            }

            return sent;
        }
    }

    /// <summary>Sends again, with DUP set, every delivery unacknowledged for <paramref name="ackWait"/>. Returns how many.</summary>
    public int RedeliverExpired(TimeSpan ackWait)
    {
        var now = Stopwatch.GetTimestamp();
        lock (_lock)
        {
            if (_closed)
            {
                return 0;
            }

            foreach (var (id, entry) in _inflight)
            {
                if (Stopwatch.GetElapsedTime(entry.SentTimestamp, now) >= ackWait)
                {
                    _expired.Add(id);
                }
            }

            foreach (var id in _expired)
            {
                var entry = _inflight[id];
                entry.Frame[0] |= 0x08; // DUP [MQTT-3.3.1-1]
                _outbound.WriteFrame(entry.Frame.AsSpan(0, entry.Length), default);
                _inflight[id] = entry with { SentTimestamp = now };
            }

            var count = _expired.Count;
            _expired.Clear();
            return count;
        }
    }

    /// <summary>The connection ended: every buffer goes back to the pool.</summary>
    public void Close()
    {
        lock (_lock)
        {
            _closed = true;
            foreach (var entry in _inflight.Values)
            {
                ArrayPool<byte>.Shared.Return(entry.Frame);
            }

            while (_waiting.TryDequeue(out var entry))
            {
                ArrayPool<byte>.Shared.Return(entry.Frame);
            }

            _inflight.Clear();
        }
    }

    private bool SendLocked(Entry entry)
    {
        var id = NextFreeId();
        entry.Frame[entry.IdOffset] = (byte)(id >> 8);
        entry.Frame[entry.IdOffset + 1] = (byte)id;
        _inflight.Add(id, entry with { SentTimestamp = Stopwatch.GetTimestamp() });
        return _outbound.WriteFrame(entry.Frame.AsSpan(0, entry.Length), default);
    }

    // Packet ids 1..65535 not in flight; the window is at most 65535, so one is always free. [MQTT-2.3.1-1]
    private ushort NextFreeId()
    {
        while (true)
        {
            _lastId = (ushort)(_lastId == ushort.MaxValue ? 1 : _lastId + 1);
            if (!_inflight.ContainsKey(_lastId))
            {
                return _lastId;
            }
        }
    }

    private readonly record struct Entry(byte[] Frame, int Length, int IdOffset, long SentTimestamp);
}
