using System.Buffers;
using System.Diagnostics;
using Courier.Actors.Connections;
using Courier.Protocols.Mqtt;

namespace Courier.Actors.Mqtt;

/// <summary>
/// QoS 1 and 2 deliveries to one MQTT client that wait for their acknowledgement: at most
/// <c>max_ack_pending</c> in flight (the others wait, in order, for a slot), each sent again after
/// <c>ack_wait</c> until acknowledged: a PUBLISH with DUP, or for a QoS 2 delivery past its PUBREC,
/// the PUBREL. A QoS 1 delivery ends at PUBACK [MQTT-4.3.2]; a QoS 2 one answers PUBREC with PUBREL
/// and ends at PUBCOMP [MQTT-4.3.3]. [MQTT-3.3.1-1]
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
    private readonly List<(long Seq, ushort PacketId)> _assigned = [];
    private readonly List<long> _expiredSeqs = [];
    private readonly Outbound _outbound;
    private int _maxInflight;
    private int _maxPacketSize = int.MaxValue;
    private bool _v5;
    private MqttOutgoingTopicAliases? _aliases; // MQTT 5.0: the Topic Aliases this server sets on the connection
    private ushort _lastId;
    private bool _closed;

    public MqttInflight(Outbound outbound, int maxAckPending)
    {
        _outbound = outbound;
        _maxInflight = maxAckPending <= 0 ? ushort.MaxValue : Math.Min(maxAckPending, ushort.MaxValue);
    }

    // Topic Aliases the server sets at most, whatever higher maximum the client allows: each keeps a copy of its
    // topic and a lookup scans them, so this bounds both. Any number up to the client's maximum is allowed. [MQTT-3.3.2-10]
    internal const ushort MaxServerTopicAliases = 64;

    /// <summary>
    /// An MQTT 5.0 client (set at CONNECT, before any delivery): PUBLISH frames carry properties; at
    /// most <paramref name="receiveMaximum"/> in flight [MQTT-3.3.4-9]; a frame over
    /// <paramref name="maxPacketSize"/> bytes (0: no limit) is discarded as if sent [MQTT-3.1.2-25]. A client
    /// whose Topic Alias Maximum (<paramref name="topicAliasMaximum"/>) is above 0 gets Topic Aliases on
    /// PUBLISH; with 0 (or none) it never gets one. [MQTT-3.1.2-26], [MQTT-3.1.2-27]
    /// </summary>
    public void UseVersion5(int receiveMaximum, int maxPacketSize, ushort topicAliasMaximum = 0)
    {
        lock (_lock)
        {
            _v5 = true;
            _maxInflight = Math.Min(_maxInflight, receiveMaximum);
            _maxPacketSize = maxPacketSize <= 0 ? int.MaxValue : maxPacketSize;
            _aliases = topicAliasMaximum == 0 ? null : new MqttOutgoingTopicAliases(Math.Min(topicAliasMaximum, MaxServerTopicAliases));
        }
    }

    /// <summary>MQTT 5.0: deliveries carry Topic Aliases (QoS 0 ones go through <see cref="WriteAliased"/>). Set at CONNECT.</summary>
    public bool SendsTopicAliases => _aliases is not null;

    /// <summary>
    /// A QoS 0 PUBLISH to a client that takes Topic Aliases: the topic's alias (a new one with the topic, a
    /// known one with an empty topic [MQTT-3.3.2-12]) is chosen and the frame queued under this lock, the one
    /// QoS 1/2 frames leave under, so the client reads every alias set before its first use.
    /// <paramref name="properties"/> holds the PUBLISH's <paramref name="propertiesLength"/> bytes of properties
    /// and room for the Topic Alias after them; <paramref name="header"/> room for the whole header.
    /// A frame over the client's Maximum Packet Size is discarded as if sent, and sets no alias. [MQTT-3.1.2-25]
    /// </summary>
    public bool WriteAliased(Span<byte> header, ReadOnlySpan<byte> topic, Span<byte> properties, int propertiesLength, in ReadOnlySequence<byte> body, bool retain)
    {
        lock (_lock)
        {
            if (_closed || _aliases is not { } aliases)
            {
                return false;
            }

            var alias = aliases.Find(topic);
            var known = alias != 0;
            var withAlias = propertiesLength + MqttProperties.WriteUInt16(properties[propertiesLength..], MqttPropertyId.TopicAlias, known ? alias : aliases.Next);
            var headerLength = MqttPacketWriter.WritePublishHeaderV5(header, known ? default : topic, 0, retain, dup: false, 0, properties[..withAlias], (int)body.Length, out _);
            if (headerLength + body.Length > _maxPacketSize)
            {
                // Too large with a new alias: the topic in full and no alias, if that fits. [MQTT-3.1.2-25]
                headerLength = MqttPacketWriter.WritePublishHeaderV5(header, topic, 0, retain, dup: false, 0, properties[..propertiesLength], (int)body.Length, out _);
                return headerLength + body.Length > _maxPacketSize || _outbound.WriteFrame(header[..headerLength], body);
            }

            if (!known)
            {
                aliases.Assign(topic);
            }

            return _outbound.WriteFrame(header[..headerLength], body);
        }
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
    /// Sends (or queues behind the window) a QoS 1 or 2 PUBLISH of <paramref name="body"/> on
    /// <paramref name="topic"/>; <paramref name="sessionSeq"/> names it to its persistent session
    /// (0: none); <paramref name="previousId"/> is the packet id it was sent with before (0: never
    /// sent): it goes again with that id, when free, and DUP [MQTT-4.4.0-1, MQTT-3.3.1-1]. Returns
    /// false when the client is gone or the outbound refused it.
    /// </summary>
    public bool Send(ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> body, bool retain, byte qos = 1, long sessionSeq = 0, ushort previousId = 0, ReadOnlySpan<byte> properties = default)
    {
        var bodyLength = (int)body.Length;
        var v5 = _v5;
        var headerLength = v5
            ? MqttPacketWriter.PublishHeaderLengthV5(topic.Length, qos, properties.Length, bodyLength)
            : MqttPacketWriter.PublishHeaderLength(topic.Length, qos, bodyLength);
        if (headerLength + bodyLength > _maxPacketSize)
        {
            return true; // over the client's Maximum Packet Size: discarded as if sent [MQTT-3.1.2-25]
        }

        var frame = ArrayPool<byte>.Shared.Rent(headerLength + bodyLength);
        int idOffset;
        if (v5)
        {
            MqttPacketWriter.WritePublishHeaderV5(frame, topic, qos, retain, dup: previousId != 0, packetId: 1, properties, bodyLength, out idOffset); // id set when sent
        }
        else
        {
            MqttPacketWriter.WritePublishHeader(frame, topic, qos, retain, dup: previousId != 0, packetId: 1, bodyLength); // id set when sent
            idOffset = headerLength - 2;
        }

        body.CopyTo(frame.AsSpan(headerLength));
        var entry = new Entry(frame, headerLength + bodyLength, idOffset, 0, sessionSeq, qos, Released: false, previousId);
        if (v5 && previousId == 0)
        {
            // A Message Expiry Interval: counted down while it waits for a slot. [MQTT-3.3.2-5], [MQTT-3.3.2-6]
            var valueAt = MqttProperties.IndexOfUInt32(properties, MqttPropertyId.MessageExpiryInterval, out var seconds);
            if (valueAt >= 0)
            {
                entry = entry with
                {
                    ExpiryAt = headerLength - properties.Length + valueAt,
                    ExpiresAt = Stopwatch.GetTimestamp() + (seconds * Stopwatch.Frequency),
                };
            }
        }
        lock (_lock)
        {
            if (_closed)
            {
                ArrayPool<byte>.Shared.Return(frame);
                return false;
            }

            if (_inflight.Count < _maxInflight && _waiting.Count == 0)
            {
                return SendLocked(entry); // at once: the interval as it came
            }

            _waiting.Enqueue(entry);
            return true;
        }
    }

    /// <summary>
    /// A PUBACK (QoS 1) or PUBCOMP (QoS 2): frees its slot and sends what waited for one. Returns
    /// whether it ended a delivery; <paramref name="sentMore"/> says whether waiting ones went out;
    /// <paramref name="sessionSeq"/> is the delivery's session sequence for a PUBACK (0 otherwise: a
    /// QoS 2 delivery told its session at PUBREC).
    /// </summary>
    public bool Acknowledge(ushort packetId, bool complete, out long sessionSeq, out bool sentMore)
    {
        sessionSeq = 0;
        sentMore = false;
        lock (_lock)
        {
            // Unknown, already acknowledged, or the other QoS's acknowledgement: nothing to do, as nats-server.
            if (!_inflight.TryGetValue(packetId, out var acked) || (acked.QoS == 2) != complete || (complete && !acked.Released))
            {
                return false;
            }

            _inflight.Remove(packetId);
            if (!complete)
            {
                sessionSeq = acked.SessionSeq;
            }

            ArrayPool<byte>.Shared.Return(acked.Frame);
            while (!_closed && _inflight.Count < _maxInflight && _waiting.TryDequeue(out var next))
            {
                if (!CountDownExpiry(next))
                {
                    continue;
                }

                sentMore |= SendLocked(next);
            }

            return true;
        }
    }

    /// <summary>
    /// A PUBREC for a QoS 2 delivery: answered with PUBREL (again for a repeated PUBREC); from now on
    /// the delivery waits for PUBCOMP [MQTT-4.3.3-1]. Returns whether this PUBREC released it (the
    /// first for a QoS 2 delivery in flight), and then its session sequence (0 when it has none).
    /// </summary>
    public bool Received(ushort packetId, out long sessionSeq)
    {
        sessionSeq = 0;
        lock (_lock)
        {
            ReadOnlySpan<byte> pubRel = [0x62, 0x02, (byte)(packetId >> 8), (byte)packetId];
            if (!_inflight.TryGetValue(packetId, out var entry) || entry.QoS != 2)
            {
                // [MQTT-4.3.3]: an unknown PUBREC still gets its PUBREL (the client may have lost ours).
                _outbound.WriteFrame(pubRel, default);
                return false;
            }

            _outbound.WriteFrame(pubRel, default);
            if (entry.Released)
            {
                return false;
            }

            _inflight[packetId] = entry with { Released = true, SentTimestamp = Stopwatch.GetTimestamp() };
            sessionSeq = entry.SessionSeq;
            return true;
        }
    }

    /// <summary>
    /// A persistent session's QoS 2 delivery that was past PUBREC when its last connection ended: its
    /// PUBREL goes again with the same packet id, and the id stays taken until PUBCOMP. [MQTT-4.4.0-1]
    /// </summary>
    public void RestoreReleased(ushort packetId)
    {
        lock (_lock)
        {
            if (_closed || packetId == 0 || _inflight.ContainsKey(packetId))
            {
                return;
            }

            var frame = ArrayPool<byte>.Shared.Rent(1); // no PUBLISH to send again: only the PUBREL
            _inflight.Add(packetId, new Entry(frame, 0, 0, Stopwatch.GetTimestamp(), 0, 2, Released: true, packetId));
            ReadOnlySpan<byte> pubRel = [0x62, 0x02, (byte)(packetId >> 8), (byte)packetId];
            _outbound.WriteFrame(pubRel, default);
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
                if (entry.Released)
                {
                    ReadOnlySpan<byte> pubRel = [0x62, 0x02, (byte)(id >> 8), (byte)id];
                    _outbound.WriteFrame(pubRel, default);
                }
                else
                {
                    entry.Frame[0] |= 0x08; // DUP [MQTT-3.3.1-1]
                    _outbound.WriteFrame(entry.Frame.AsSpan(0, entry.Length), default);
                }

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

    /// <summary>
    /// Moves the session sequences of persistent-session deliveries that expired while waiting for a
    /// slot (never sent, so deleted [MQTT-3.3.2-5]) into <paramref name="into"/>: the session forgets
    /// them as if acknowledged.
    /// </summary>
    public void DrainExpired(List<long> into)
    {
        lock (_lock)
        {
            into.AddRange(_expiredSeqs);
            _expiredSeqs.Clear();
        }
    }

    /// <summary>
    /// Moves the packet ids given to persistent-session deliveries since the last call into
    /// <paramref name="into"/>: the session keeps them, so that a delivery sent again on the next
    /// connection keeps its id [MQTT-4.4.0-1].
    /// </summary>
    public void DrainAssigned(List<(long Seq, ushort PacketId)> into)
    {
        lock (_lock)
        {
            into.AddRange(_assigned);
            _assigned.Clear();
        }
    }

    // A delivery leaving the waiting queue with a Message Expiry Interval: past it, dropped (false); else the
    // interval in its frame becomes the whole seconds it has left. [MQTT-3.3.2-5], [MQTT-3.3.2-6]
    private bool CountDownExpiry(Entry entry)
    {
        if (entry.ExpiryAt < 0)
        {
            return true;
        }

        var left = entry.ExpiresAt - Stopwatch.GetTimestamp();
        if (left <= 0)
        {
            ArrayPool<byte>.Shared.Return(entry.Frame);
            if (entry.SessionSeq > 0)
            {
                _expiredSeqs.Add(entry.SessionSeq);
            }

            return false;
        }

        var seconds = (uint)((left + Stopwatch.Frequency - 1) / Stopwatch.Frequency);
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(entry.Frame.AsSpan(entry.ExpiryAt), seconds);
        return true;
    }

    private bool SendLocked(Entry entry)
    {
        var id = entry.PreferredId != 0 && !_inflight.ContainsKey(entry.PreferredId) ? entry.PreferredId : NextFreeId();
        if (entry.SessionSeq > 0 && id != entry.PreferredId)
        {
            _assigned.Add((entry.SessionSeq, id));
        }

        entry.Frame[entry.IdOffset] = (byte)(id >> 8);
        entry.Frame[entry.IdOffset + 1] = (byte)id;
        _inflight.Add(id, entry with { SentTimestamp = Stopwatch.GetTimestamp() });
        if (_aliases is { } aliases && entry.PreferredId == 0)
        {
            // A first send. One sent on an earlier connection goes again as it was, with its whole topic.
            return SendAliasedLocked(aliases, entry);
        }

        return _outbound.WriteFrame(entry.Frame.AsSpan(0, entry.Length), default);
    }

    // A QoS 1/2 PUBLISH's first send to a client that takes Topic Aliases: its header again with the topic's
    // alias (a new one with the topic, a known one with an empty topic), the body from the kept frame. The kept
    // frame keeps the whole topic and no alias, so a redelivery (DUP) names its topic whatever the aliases
    // became since, and changes none. Over the client's Maximum Packet Size with the alias: sent without one.
    private bool SendAliasedLocked(MqttOutgoingTopicAliases aliases, Entry entry)
    {
        var frame = entry.Frame.AsSpan(0, entry.Length);
        ReadVariableByteInteger(frame[1..], out var remainingLengthSize);
        var topicLengthAt = 1 + remainingLengthSize; // after the fixed header [MQTT-2.1.4]
        var topic = frame[(topicLengthAt + 2)..entry.IdOffset];
        var propertiesAt = entry.IdOffset + 2;
        var propertiesLength = ReadVariableByteInteger(frame[propertiesAt..], out var lengthSize);
        var properties = frame.Slice(propertiesAt + lengthSize, propertiesLength);
        var bodyAt = propertiesAt + lengthSize + propertiesLength;
        var body = new ReadOnlySequence<byte>(entry.Frame, bodyAt, entry.Length - bodyAt);

        var alias = aliases.Find(topic);
        var known = alias != 0;
        var needed = propertiesLength + MqttProperties.TwoByteSize + MqttPacketWriter.PublishHeaderLengthV5(topic.Length, entry.QoS, propertiesLength + MqttProperties.TwoByteSize, (int)body.Length);
        byte[]? rented = null;
        var scratch = needed <= 512 ? stackalloc byte[512] : (rented = ArrayPool<byte>.Shared.Rent(needed));
        try
        {
            var withAlias = scratch[..(propertiesLength + MqttProperties.TwoByteSize)];
            properties.CopyTo(withAlias);
            MqttProperties.WriteUInt16(withAlias[propertiesLength..], MqttPropertyId.TopicAlias, known ? alias : aliases.Next);
            var header = scratch[withAlias.Length..];
            var id = (ushort)((frame[entry.IdOffset] << 8) | frame[entry.IdOffset + 1]);
            var headerLength = MqttPacketWriter.WritePublishHeaderV5(header, known ? default : topic, entry.QoS, (frame[0] & 0x01) != 0, (frame[0] & 0x08) != 0, id, withAlias, (int)body.Length, out _);
            if (headerLength + body.Length > _maxPacketSize)
            {
                return _outbound.WriteFrame(frame, default); // the kept frame fit: sent as it is
            }

            if (!known)
            {
                aliases.Assign(topic);
            }

            return _outbound.WriteFrame(header[..headerLength], body);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    // A variable byte integer of a frame this class wrote (so well formed). [MQTT-1.5.5]
    private static int ReadVariableByteInteger(ReadOnlySpan<byte> input, out int size)
    {
        MqttProperties.TryReadVariableByteInteger(input, out var value, out size, out _);
        return value;
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

    /// <param name="Frame">The whole PUBLISH, in a pooled buffer.</param>
    /// <param name="Length">Its length.</param>
    /// <param name="IdOffset">Where its packet id is.</param>
    /// <param name="SentTimestamp">When it (or its PUBREL) was last sent.</param>
    /// <param name="SessionSeq">Its persistent session's sequence for it; 0 when it has none.</param>
    /// <param name="QoS">1 or 2.</param>
    /// <param name="Released">QoS 2: PUBREC came and PUBREL was sent; it waits for PUBCOMP.</param>
    /// <param name="PreferredId">The packet id it had on an earlier connection (0: none).</param>
    /// <param name="ExpiryAt">MQTT 5.0: where the Message Expiry Interval's value is in <paramref name="Frame"/>; -1 for none.</param>
    /// <param name="ExpiresAt">MQTT 5.0: when that interval runs out (<see cref="Stopwatch"/> timestamp).</param>
    private readonly record struct Entry(byte[] Frame, int Length, int IdOffset, long SentTimestamp, long SessionSeq, byte QoS, bool Released, ushort PreferredId = 0, int ExpiryAt = -1, long ExpiresAt = 0);
}
