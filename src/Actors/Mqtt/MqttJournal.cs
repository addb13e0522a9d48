using Akka.Actor;
using Akka.Serialization;

namespace Courier.Actors.Mqtt;

/// <summary>A QoS 1 or 2 message kept by a persistent session until its client acknowledges it.</summary>
/// <param name="Seq">The session's sequence for it (never reused; acknowledgements name it).</param>
/// <param name="Topic">The MQTT topic it is delivered on.</param>
/// <param name="Payload">The payload, without NATS headers.</param>
/// <param name="QoS">The delivery QoS: the lower of the publisher's and the subscription's (1 or 2).</param>
/// <param name="Headers">
/// The NATS header block it was published with (<c>Nmqtt-Pub</c>, an MQTT 5.0 PUBLISH's properties as
/// <see cref="Protocols.Mqtt.MqttNatsHeaders"/>), so a 5.0 client gets its properties; empty for
/// records of journal version 1.
/// </param>
/// <param name="ExpiresAt">
/// MQTT 5.0: when its Message Expiry Interval runs out, Unix milliseconds (wall clock, as it outlives
/// the process); 0 for never. Not sent once past it, unless already sent. [MQTT-3.3.2-5]
/// </param>
/// <param name="SubscriptionId">MQTT 5.0: the Subscription Identifier of the subscription that kept it (0: none). [MQTT-3.3.4-3]</param>
/// <param name="Retain">MQTT 5.0: sent with RETAIN (published retained, to a Retain As Published subscription). [MQTT-3.3.1-12]</param>
internal sealed record MqttStoredMessage(long Seq, byte[] Topic, byte[] Payload, byte QoS, byte[]? Headers = null, long ExpiresAt = 0, int SubscriptionId = 0, bool Retain = false);

/// <summary>A persistent session's subscription.</summary>
/// <param name="Filter">The topic filter, as the client sent it.</param>
/// <param name="QoS">The granted QoS.</param>
/// <param name="SubscriptionId">MQTT 5.0: its Subscription Identifier (0: none); records of journal version 1 have none.</param>
/// <param name="NoLocal">MQTT 5.0: its No Local option. [MQTT-3.8.3-3]</param>
/// <param name="RetainAsPublished">MQTT 5.0: its Retain As Published option. [MQTT-3.3.1-13]</param>
internal readonly record struct MqttSessionSubscription(string Filter, byte QoS, int SubscriptionId = 0, bool NoLocal = false, bool RetainAsPublished = false);

/// <summary>What a persistent session journals: one event per change, messages in batches.</summary>
internal enum MqttSessionEventKind : byte
{
    /// <summary>A CONNECT with clean_session=0 made the session (from now on it outlives its connections).</summary>
    Created = 1,

    /// <summary>SUBSCRIBE: filters added or replaced, with their granted QoS.</summary>
    Subscribed = 2,

    /// <summary>UNSUBSCRIBE: filters removed.</summary>
    Unsubscribed = 3,

    /// <summary>QoS 1/2 messages for the session's subscriptions, kept until acknowledged.</summary>
    Stored = 4,

    /// <summary>
    /// Messages the client acknowledged (PUBACK, or PUBREC for QoS 2), with the packet ids of QoS 2
    /// deliveries now waiting for PUBCOMP and of those completed.
    /// </summary>
    Acked = 5,

    /// <summary>Inbound QoS 2: packet ids routed and waiting for PUBREL, or released by it. [MQTT-4.3.3-2]</summary>
    Qos2In = 6,

    /// <summary>MQTT 5.0: the Session Expiry Interval a CONNECT or DISCONNECT set (<see cref="MqttSessionEvent.ExpiryInterval"/>). [MQTT-3.1.2.11.2]</summary>
    Expiry = 7,

    /// <summary>
    /// MQTT 5.0: a will waiting for its Will Delay Interval (<see cref="MqttSessionEvent.Will"/>), or, with none,
    /// that the waiting will was published or dropped. Journal version 4. [MQTT-3.1.3-9]
    /// </summary>
    Will = 8,
}

/// <summary>
/// MQTT 5.0: a will its session holds for its Will Delay Interval, journaled so that a restart keeps it.
/// </summary>
/// <param name="Subject">The NATS subject of its topic.</param>
/// <param name="Topic">The will topic.</param>
/// <param name="Payload">The will payload.</param>
/// <param name="QoS">The will QoS.</param>
/// <param name="Retain">The will's RETAIN.</param>
/// <param name="HeaderLines">Its properties as NATS header lines (<c>Name: Value\r\n</c> each), after Nmqtt-Pub; empty for none.</param>
/// <param name="DueAt">When its delay runs out, Unix milliseconds (wall clock: it outlives the process), counted from the disconnect.</param>
internal sealed record MqttJournaledWill(byte[] Subject, byte[] Topic, byte[] Payload, byte QoS, bool Retain, byte[] HeaderLines, long DueAt);

/// <summary>One event of a persistent MQTT session (<see cref="MqttSessionActor"/>).</summary>
internal sealed class MqttSessionEvent
{
    public MqttSessionEvent(MqttSessionEventKind kind) => Kind = kind;

    public MqttSessionEventKind Kind { get; }

    /// <summary><see cref="MqttSessionEventKind.Subscribed"/>: filter, granted QoS and subscription identifier.</summary>
    public List<MqttSessionSubscription> Subscriptions { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Unsubscribed"/>: filters.</summary>
    public List<string> Filters { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Stored"/>: the messages.</summary>
    public List<MqttStoredMessage> Messages { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Acked"/>: session sequences.</summary>
    public List<long> Acked { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Acked"/>: QoS 2 deliveries past PUBREC (PUBREL sent), by packet id.</summary>
    public List<ushort> Released { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Acked"/>: QoS 2 deliveries completed by PUBCOMP, by packet id.</summary>
    public List<ushort> Completed { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Qos2In"/>: inbound QoS 2 packet ids routed, waiting for PUBREL.</summary>
    public List<ushort> InReceived { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Qos2In"/>: inbound QoS 2 packet ids released by PUBREL.</summary>
    public List<ushort> InReleased { get; } = [];

    /// <summary><see cref="MqttSessionEventKind.Expiry"/>: seconds the session outlives its connection; <see cref="uint.MaxValue"/> never ends. Journal version 3.</summary>
    public uint ExpiryInterval { get; set; } = uint.MaxValue;

    /// <summary><see cref="MqttSessionEventKind.Will"/>: the will waiting for its delay; null: none waits any more. Journal version 4.</summary>
    public MqttJournaledWill? Will { get; set; }

    public override string ToString() => $"MqttSessionEvent({Kind})";
}

/// <summary>A persistent session's whole state, saved every so many events so recovery replays few.</summary>
internal sealed class MqttSessionSnapshot
{
    public long NextSeq { get; set; }

    public List<MqttSessionSubscription> Subscriptions { get; } = [];

    public List<MqttStoredMessage> Pending { get; } = [];

    /// <summary>QoS 2 deliveries waiting for PUBCOMP, by packet id.</summary>
    public List<ushort> Released { get; } = [];

    /// <summary>Inbound QoS 2 packet ids waiting for PUBREL.</summary>
    public List<ushort> InReceived { get; } = [];

    /// <summary>MQTT 5.0 Session Expiry Interval, seconds; <see cref="uint.MaxValue"/> (and every record before version 3): never ends.</summary>
    public uint ExpiryInterval { get; set; } = uint.MaxValue;

    /// <summary>MQTT 5.0: a will waiting for its Will Delay Interval; null for none (and every record before version 4).</summary>
    public MqttJournaledWill? Will { get; set; }
}

/// <summary>The node's persistent MQTT client ids (so their sessions capture messages from startup on).</summary>
internal sealed class MqttSessionIndexEvent
{
    public MqttSessionIndexEvent(string clientId, bool added)
    {
        ClientId = clientId;
        Added = added;
    }

    public string ClientId { get; }

    /// <summary>True: a persistent session was made; false: a clean session replaced it.</summary>
    public bool Added { get; }

    public override string ToString() => $"MqttSessionIndexEvent({ClientId}, added={Added})";
}

/// <summary>The index's whole state.</summary>
internal sealed class MqttSessionIndexSnapshot
{
    public List<string> ClientIds { get; } = [];
}

/// <summary>A retained message set (payload non-empty) or cleared (payload empty). [MQTT-3.3.1-5], [MQTT-3.3.1-10]</summary>
internal sealed class MqttRetainedEvent
{
    public MqttRetainedEvent(string subject, byte[] topic, byte[] payload, byte qos, byte[]? headers = null, long expiresAt = 0)
    {
        Subject = subject;
        Topic = topic;
        Payload = payload;
        QoS = qos;
        Headers = headers ?? [];
        ExpiresAt = expiresAt;
    }

    /// <summary>MQTT 5.0: the properties as a NATS header block; empty for none.</summary>
    public byte[] Headers { get; }

    /// <summary>MQTT 5.0: when the message expires, Unix milliseconds; 0 for never.</summary>
    public long ExpiresAt { get; }

    public string Subject { get; }

    public byte[] Topic { get; }

    public byte[] Payload { get; }

    public byte QoS { get; }

    public override string ToString() => $"MqttRetainedEvent({Subject}, {Payload.Length} bytes)";
}

/// <summary>Every retained message at one point.</summary>
internal sealed class MqttRetainedSnapshot
{
    public List<MqttRetainedMessage> Messages { get; } = [];
}

/// <summary>
/// The Akka serializer of the MQTT gateway's journal events and snapshots (bound in reference.conf):
/// a version byte and length-prefixed fields, no JSON.
/// </summary>
internal sealed class MqttJournalSerializer : SerializerWithStringManifest
{
    /// <summary>The serializer id stored beside every event and snapshot: never change it.</summary>
    public const int Id = 4_222_010;

    // 2: stored and retained messages keep their header block and expiry time, stored ones their
    // subscription identifier, subscriptions their identifier and MQTT 5.0 options. Version 1 records are still read.
    // 3: session events and snapshots end with the MQTT 5.0 Session Expiry Interval. Versions 1 and 2 are still read.
    // 4: then with the will waiting for its Will Delay Interval, if any. Versions 1 to 3 are still read.
    private const byte Version = 4;

    public MqttJournalSerializer(ExtendedActorSystem system)
        : base(system)
    {
    }

    public override int Identifier => Id;

    public override string Manifest(object o) => o switch
    {
        MqttSessionEvent => "mqtt.session",
        MqttSessionSnapshot => "mqtt.session-snapshot",
        MqttSessionIndexEvent => "mqtt.index",
        MqttSessionIndexSnapshot => "mqtt.index-snapshot",
        MqttRetainedEvent => "mqtt.retained",
        MqttRetainedSnapshot => "mqtt.retained-snapshot",
        _ => throw new ArgumentException($"{o.GetType()} is not an MQTT journal type", nameof(o)),
    };

    public override byte[] ToBinary(object obj)
    {
        using var stream = new MemoryStream();
        using (var w = new BinaryWriter(stream))
        {
            w.Write(Version);
            switch (obj)
            {
                case MqttSessionEvent e:
                    w.Write((byte)e.Kind);
                    WriteSubscriptions(w, e.Subscriptions);
                    w.Write(e.Filters.Count);
                    foreach (var f in e.Filters)
                    {
                        w.Write(f);
                    }

                    WriteMessages(w, e.Messages);
                    w.Write(e.Acked.Count);
                    foreach (var seq in e.Acked)
                    {
                        w.Write(seq);
                    }

                    WriteIds(w, e.Released);
                    WriteIds(w, e.Completed);
                    WriteIds(w, e.InReceived);
                    WriteIds(w, e.InReleased);
                    w.Write(e.ExpiryInterval);
                    WriteWill(w, e.Will);
                    break;
                case MqttSessionSnapshot s:
                    w.Write(s.NextSeq);
                    WriteSubscriptions(w, s.Subscriptions);
                    WriteMessages(w, s.Pending);
                    WriteIds(w, s.Released);
                    WriteIds(w, s.InReceived);
                    w.Write(s.ExpiryInterval);
                    WriteWill(w, s.Will);
                    break;
                case MqttSessionIndexEvent e:
                    w.Write(e.ClientId);
                    w.Write(e.Added);
                    break;
                case MqttSessionIndexSnapshot s:
                    w.Write(s.ClientIds.Count);
                    foreach (var id in s.ClientIds)
                    {
                        w.Write(id);
                    }

                    break;
                case MqttRetainedEvent e:
                    WriteRetained(w, new MqttRetainedMessage(e.Subject, e.Topic, e.Payload, e.QoS, e.Headers, e.ExpiresAt));
                    break;
                case MqttRetainedSnapshot s:
                    w.Write(s.Messages.Count);
                    foreach (var m in s.Messages)
                    {
                        WriteRetained(w, m);
                    }

                    break;
                default:
                    throw new ArgumentException($"{obj.GetType()} is not an MQTT journal type", nameof(obj));
            }
        }

        return stream.ToArray();
    }

    public override object FromBinary(byte[] bytes, string manifest)
    {
        try
        {
            using var r = new BinaryReader(new MemoryStream(bytes, writable: false));
            var version = r.ReadByte();
            if (version is < 1 or > Version)
            {
                throw new System.Runtime.Serialization.SerializationException($"MQTT journal record version {bytes[0]}, expected 1 to {Version}");
            }

            switch (manifest)
            {
                case "mqtt.session":
                    {
                        var e = new MqttSessionEvent((MqttSessionEventKind)r.ReadByte());
                        ReadSubscriptions(r, e.Subscriptions, version);
                        var filters = Count(r);
                        for (var i = 0; i < filters; i++)
                        {
                            e.Filters.Add(r.ReadString());
                        }

                        ReadMessages(r, e.Messages, version);
                        var acked = Count(r);
                        for (var i = 0; i < acked; i++)
                        {
                            e.Acked.Add(r.ReadInt64());
                        }

                        ReadIds(r, e.Released);
                        ReadIds(r, e.Completed);
                        ReadIds(r, e.InReceived);
                        ReadIds(r, e.InReleased);
                        if (version >= 3)
                        {
                            e.ExpiryInterval = r.ReadUInt32();
                        }

                        if (version >= 4)
                        {
                            e.Will = ReadWill(r);
                        }

                        return e;
                    }

                case "mqtt.session-snapshot":
                    {
                        var s = new MqttSessionSnapshot { NextSeq = r.ReadInt64() };
                        ReadSubscriptions(r, s.Subscriptions, version);
                        ReadMessages(r, s.Pending, version);
                        ReadIds(r, s.Released);
                        ReadIds(r, s.InReceived);
                        if (version >= 3)
                        {
                            s.ExpiryInterval = r.ReadUInt32();
                        }

                        if (version >= 4)
                        {
                            s.Will = ReadWill(r);
                        }

                        return s;
                    }

                case "mqtt.index":
                    return new MqttSessionIndexEvent(r.ReadString(), r.ReadBoolean());
                case "mqtt.index-snapshot":
                    {
                        var s = new MqttSessionIndexSnapshot();
                        var count = Count(r);
                        for (var i = 0; i < count; i++)
                        {
                            s.ClientIds.Add(r.ReadString());
                        }

                        return s;
                    }

                case "mqtt.retained":
                    {
                        var m = ReadRetained(r, version);
                        return new MqttRetainedEvent(m.Subject, m.Topic, m.Payload, m.QoS, m.Headers, m.ExpiresAt);
                    }

                case "mqtt.retained-snapshot":
                    {
                        var s = new MqttRetainedSnapshot();
                        var count = Count(r);
                        for (var i = 0; i < count; i++)
                        {
                            s.Messages.Add(ReadRetained(r, version));
                        }

                        return s;
                    }

                default:
                    throw new System.Runtime.Serialization.SerializationException($"unknown MQTT journal manifest '{manifest}'");
            }
        }
        catch (EndOfStreamException e)
        {
            throw new System.Runtime.Serialization.SerializationException("MQTT journal record is truncated", e);
        }
    }

    private static void WriteSubscriptions(BinaryWriter w, List<MqttSessionSubscription> subscriptions)
    {
        w.Write(subscriptions.Count);
        foreach (var (filter, qos, subscriptionId, noLocal, retainAsPublished) in subscriptions)
        {
            w.Write(filter);
            w.Write(qos);
            w.Write(subscriptionId);
            w.Write((byte)((noLocal ? 1 : 0) | (retainAsPublished ? 2 : 0)));
        }
    }

    private static void ReadSubscriptions(BinaryReader r, List<MqttSessionSubscription> into, byte version)
    {
        var count = Count(r);
        for (var i = 0; i < count; i++)
        {
            var subscription = new MqttSessionSubscription(r.ReadString(), r.ReadByte());
            if (version > 1)
            {
                var id = r.ReadInt32();
                var options = r.ReadByte();
                subscription = subscription with { SubscriptionId = id, NoLocal = (options & 1) != 0, RetainAsPublished = (options & 2) != 0 };
            }

            into.Add(subscription);
        }
    }

    private static void WriteIds(BinaryWriter w, List<ushort> ids)
    {
        w.Write(ids.Count);
        foreach (var id in ids)
        {
            w.Write(id);
        }
    }

    private static void ReadIds(BinaryReader r, List<ushort> into)
    {
        var count = Count(r);
        for (var i = 0; i < count; i++)
        {
            into.Add(r.ReadUInt16());
        }
    }

    private static void WriteMessages(BinaryWriter w, List<MqttStoredMessage> messages)
    {
        w.Write(messages.Count);
        foreach (var m in messages)
        {
            w.Write(m.Seq);
            WriteBytes(w, m.Topic);
            WriteBytes(w, m.Payload);
            w.Write(m.QoS);
            WriteBytes(w, m.Headers ?? []);
            w.Write(m.ExpiresAt);
            w.Write(m.SubscriptionId);
            w.Write(m.Retain);
        }
    }

    private static void ReadMessages(BinaryReader r, List<MqttStoredMessage> into, byte version)
    {
        var count = Count(r);
        for (var i = 0; i < count; i++)
        {
            var message = new MqttStoredMessage(r.ReadInt64(), ReadBytes(r), ReadBytes(r), r.ReadByte());
            into.Add(version == 1 ? message : message with { Headers = ReadBytes(r), ExpiresAt = r.ReadInt64(), SubscriptionId = r.ReadInt32(), Retain = r.ReadBoolean() });
        }
    }

    private static void WriteWill(BinaryWriter w, MqttJournaledWill? will)
    {
        w.Write(will is not null);
        if (will is null)
        {
            return;
        }

        WriteBytes(w, will.Subject);
        WriteBytes(w, will.Topic);
        WriteBytes(w, will.Payload);
        w.Write(will.QoS);
        w.Write(will.Retain);
        WriteBytes(w, will.HeaderLines);
        w.Write(will.DueAt);
    }

    private static MqttJournaledWill? ReadWill(BinaryReader r) =>
        r.ReadBoolean() ? new MqttJournaledWill(ReadBytes(r), ReadBytes(r), ReadBytes(r), r.ReadByte(), r.ReadBoolean(), ReadBytes(r), r.ReadInt64()) : null;

    private static void WriteRetained(BinaryWriter w, MqttRetainedMessage m)
    {
        w.Write(m.Subject);
        WriteBytes(w, m.Topic);
        WriteBytes(w, m.Payload);
        w.Write(m.QoS);
        WriteBytes(w, m.Headers ?? []);
        w.Write(m.ExpiresAt);
    }

    private static MqttRetainedMessage ReadRetained(BinaryReader r, byte version)
    {
        var m = new MqttRetainedMessage(r.ReadString(), ReadBytes(r), ReadBytes(r), r.ReadByte());
        return version == 1 ? m : m with { Headers = ReadBytes(r), ExpiresAt = r.ReadInt64() };
    }

    private static void WriteBytes(BinaryWriter w, byte[] bytes)
    {
        w.Write(bytes.Length);
        w.Write(bytes);
    }

    private static byte[] ReadBytes(BinaryReader r)
    {
        var length = Count(r);
        return r.ReadBytes(length);
    }

    // A count or length beyond what is left is corruption, not a reason to allocate.
    private static int Count(BinaryReader r)
    {
        var count = r.ReadInt32();
        return count >= 0 && count <= r.BaseStream.Length - r.BaseStream.Position
            ? count
            : throw new System.Runtime.Serialization.SerializationException("MQTT journal record count exceeds its size");
    }
}
