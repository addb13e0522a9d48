using System.Buffers;
using Akka.Actor;
using Akka.Serialization;

namespace Courier.Actors.JetStream;

/// <summary>A delivered, not yet acknowledged message as a consumer persists it.</summary>
/// <param name="StreamSeq">The message's stream sequence.</param>
/// <param name="ConsumerSeq">The consumer sequence of its latest delivery.</param>
/// <param name="Deliveries">How often it has been delivered.</param>
internal readonly record struct PendingRecord(ulong StreamSeq, ulong ConsumerSeq, long Deliveries);

/// <summary>
/// What changed in a durable consumer during one turn (a delivery pass, an ack batch): the event it
/// persists, one per turn, never one per message. Positions are absolute; pending entries are set
/// or removed, so replaying a suffix of these over a newer snapshot converges on the newest state.
/// </summary>
internal sealed class ConsumerDelta
{
    public ulong DeliveredStream { get; set; }

    public ulong DeliveredConsumer { get; set; }

    public ulong AckFloorStream { get; set; }

    public ulong AckFloorConsumer { get; set; }

    /// <summary>No longer written or read (0): num_redelivered is counted from the pending deliveries, as nats-server does; kept so the journal format is unchanged.</summary>
    public long Redelivered { get; set; }

    /// <summary>Deliveries (and redeliveries) made pending in this turn.</summary>
    public List<PendingRecord> Delivered { get; } = [];

    /// <summary>Stream sequences no longer pending (acknowledged or terminated).</summary>
    public List<ulong> Removed { get; } = [];

    public bool IsEmpty => Delivered.Count == 0 && Removed.Count == 0;
}

/// <summary>A durable consumer's whole state, saved every so many events so recovery replays few.</summary>
internal sealed class ConsumerSnapshot
{
    public ulong DeliveredStream { get; set; }

    public ulong DeliveredConsumer { get; set; }

    public ulong AckFloorStream { get; set; }

    public ulong AckFloorConsumer { get; set; }

    /// <summary>No longer written or read (0): num_redelivered is counted from the pending deliveries, as nats-server does; kept so the journal format is unchanged.</summary>
    public long Redelivered { get; set; }

    public List<PendingRecord> Pending { get; } = [];
}

/// <summary>
/// The Akka serializer of the consumer's events and snapshots (bound in reference.conf): varints, a
/// version byte, no JSON. A delta of a 256-message pull batch is about 2 KB.
/// </summary>
internal sealed class ConsumerJournalSerializer : SerializerWithStringManifest
{
    public const string DeltaManifest = "jsc.delta";
    public const string SnapshotManifest = "jsc.snapshot";

    /// <summary>The serializer id stored beside every event and snapshot: never change it.</summary>
    public const int Id = 4_222_001;

    private const byte Version = 1;

    public ConsumerJournalSerializer(ExtendedActorSystem system)
        : base(system)
    {
    }

    public override int Identifier => Id;

    public override string Manifest(object o) => o switch
    {
        ConsumerDelta => DeltaManifest,
        ConsumerSnapshot => SnapshotManifest,
        _ => throw new ArgumentException($"{o.GetType()} is not a consumer journal type", nameof(o)),
    };

    public override byte[] ToBinary(object obj)
    {
        var output = new ArrayBufferWriter<byte>(64);
        switch (obj)
        {
            case ConsumerDelta delta:
                Write(delta, output);
                break;
            case ConsumerSnapshot snapshot:
                Write(snapshot, output);
                break;
            default:
                throw new ArgumentException($"{obj.GetType()} is not a consumer journal type", nameof(obj));
        }

        return output.WrittenSpan.ToArray();
    }

    public override object FromBinary(byte[] bytes, string manifest) => manifest switch
    {
        DeltaManifest => ReadDelta(bytes),
        SnapshotManifest => ReadSnapshot(bytes),
        _ => throw new System.Runtime.Serialization.SerializationException($"unknown consumer journal manifest '{manifest}'"),
    };

    internal static void Write(ConsumerDelta value, IBufferWriter<byte> output)
    {
        var writer = new VarWriter(output);
        writer.Byte(Version);
        writer.Positions(value.DeliveredStream, value.DeliveredConsumer, value.AckFloorStream, value.AckFloorConsumer, value.Redelivered);
        writer.Pending(value.Delivered);
        writer.U(checked((ulong)value.Removed.Count));
        foreach (var seq in value.Removed)
        {
            writer.U(seq);
        }
    }

    internal static ConsumerDelta ReadDelta(ReadOnlySpan<byte> bytes)
    {
        var reader = new VarReader(bytes);
        reader.ExpectVersion(Version);
        var delta = new ConsumerDelta();
        (delta.DeliveredStream, delta.DeliveredConsumer, delta.AckFloorStream, delta.AckFloorConsumer, delta.Redelivered) = reader.Positions();
        reader.Pending(delta.Delivered);
        var removed = reader.Count();
        for (var i = 0; i < removed; i++)
        {
            delta.Removed.Add(reader.U());
        }

        return delta;
    }

    internal static void Write(ConsumerSnapshot value, IBufferWriter<byte> output)
    {
        var writer = new VarWriter(output);
        writer.Byte(Version);
        writer.Positions(value.DeliveredStream, value.DeliveredConsumer, value.AckFloorStream, value.AckFloorConsumer, value.Redelivered);
        writer.Pending(value.Pending);
    }

    internal static ConsumerSnapshot ReadSnapshot(ReadOnlySpan<byte> bytes)
    {
        var reader = new VarReader(bytes);
        reader.ExpectVersion(Version);
        var snapshot = new ConsumerSnapshot();
        (snapshot.DeliveredStream, snapshot.DeliveredConsumer, snapshot.AckFloorStream, snapshot.AckFloorConsumer, snapshot.Redelivered) = reader.Positions();
        reader.Pending(snapshot.Pending);
        return snapshot;
    }

    private readonly ref struct VarWriter(IBufferWriter<byte> output)
    {
        public void Byte(byte value)
        {
            output.GetSpan(1)[0] = value;
            output.Advance(1);
        }

        public void U(ulong value)
        {
            var span = output.GetSpan(10);
            var n = 0;
            while (value >= 0x80)
            {
                span[n++] = (byte)(value | 0x80);
                value >>= 7;
            }

            span[n++] = (byte)value;
            output.Advance(n);
        }

        public void Positions(ulong deliveredStream, ulong deliveredConsumer, ulong floorStream, ulong floorConsumer, long redelivered)
        {
            U(deliveredStream);
            U(deliveredConsumer);
            U(floorStream);
            U(floorConsumer);
            U((ulong)Math.Max(redelivered, 0));
        }

        public void Pending(List<PendingRecord> records)
        {
            U(checked((ulong)records.Count));
            foreach (var p in records)
            {
                U(p.StreamSeq);
                U(p.ConsumerSeq);
                U((ulong)Math.Max(p.Deliveries, 0));
            }
        }
    }

    private ref struct VarReader(ReadOnlySpan<byte> bytes)
    {
        private readonly ReadOnlySpan<byte> _bytes = bytes;
        private int _at;

        public void ExpectVersion(byte version)
        {
            if (_bytes.IsEmpty || _bytes[0] != version)
            {
                throw new InvalidDataException($"consumer journal record version {(_bytes.IsEmpty ? -1 : _bytes[0])}, expected {version}");
            }

            _at = 1;
        }

        public ulong U()
        {
            ulong value = 0;
            for (var shift = 0; shift < 64; shift += 7)
            {
                if (_at >= _bytes.Length)
                {
                    throw new InvalidDataException("consumer journal record is truncated");
                }

                var b = _bytes[_at++];
                value |= (ulong)(b & 0x7F) << shift;
                if (b < 0x80)
                {
                    return value;
                }
            }

            throw new InvalidDataException("consumer journal record has an overlong number");
        }

        public int Count()
        {
            var count = U();
            // Each entry takes at least one byte: a count beyond what is left is corruption, not a reason to allocate.
            return count <= (ulong)(_bytes.Length - _at) ? (int)count : throw new InvalidDataException("consumer journal record count exceeds its size");
        }

        public (ulong, ulong, ulong, ulong, long) Positions() => (U(), U(), U(), U(), (long)U());

        public void Pending(List<PendingRecord> into)
        {
            var count = Count();
            for (var i = 0; i < count; i++)
            {
                into.Add(new PendingRecord(U(), U(), (long)U()));
            }
        }
    }
}
