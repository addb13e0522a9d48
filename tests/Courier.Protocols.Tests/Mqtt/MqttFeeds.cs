using System.Buffers;
using System.Text;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Tests.Nats;
using Xunit;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// Feeds one input to fresh MQTT parsers every way a connection could deliver it and checks that
/// every delivery reads the same: whole; byte by byte, each byte its own segment; split into two
/// segments at every position; and incrementally as a pipe would, a few bytes per read, never
/// letting NeedMoreData move the reader.
/// </summary>
internal static class MqttFeeds
{
    // Arrival sizes for the pipe-like feeds, bytes.
    private static readonly int[] ArrivalSizes = [1, 2, 3, 7];

    /// <summary>Asserts every delivery of <paramref name="input"/> gives <paramref name="expected"/>.</summary>
    public static void AssertEveryFeeding(Func<MqttParser> create, byte[] input, MqttOutcome expected)
    {
        foreach (var (feeding, outcome) in EveryFeeding(create, input))
        {
            Assert.True(expected.Equals(outcome), $"{feeding}\nexpected: {expected}\nactual:   {outcome}");
        }
    }

    /// <summary>Each way to deliver <paramref name="input"/>, named, with what the parser made of it.</summary>
    public static IEnumerable<(string Feeding, MqttOutcome Outcome)> EveryFeeding(Func<MqttParser> create, byte[] input)
    {
        yield return ("whole", Run(create(), new ReadOnlySequence<byte>(input)));
        yield return ("byte by byte", Run(create(), Sequences.ByteByByte(input)));
        for (var i = 0; i <= input.Length; i++)
        {
            yield return ($"split at {i}", Run(create(), Sequences.SplitAt(input, i)));
        }

        foreach (var size in ArrivalSizes)
        {
            yield return ($"pipe, {size} byte(s) per read, one segment per read", Incremental(create(), input, size, segmentPerRead: true));
            yield return ($"pipe, {size} byte(s) per read, contiguous buffer", Incremental(create(), input, size, segmentPerRead: false));
        }
    }

    /// <summary>Calls TryRead until it needs more data or fails, checking the reader contract on each call.</summary>
    public static MqttOutcome Run(MqttParser parser, ReadOnlySequence<byte> buffer)
    {
        var packets = new List<string>();
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        while (true)
        {
            var before = reader.Consumed;
            var status = parser.TryRead(ref reader, ref packet, out var error);
            switch (status)
            {
                case MqttReadStatus.Packet:
                    Assert.Equal(MqttParseError.None, error);
                    Assert.True(reader.Consumed > before, "a packet must consume input");
                    packets.Add(Describe(packet));
                    break;
                case MqttReadStatus.NeedMoreData:
                    Assert.Equal(MqttParseError.None, error);
                    Assert.Equal(before, reader.Consumed);
                    return new MqttOutcome(packets, status, error, reader.Remaining);
                default:
                    Assert.NotEqual(MqttParseError.None, error);
                    return new MqttOutcome(packets, status, error, -1);
            }
        }
    }

    /// <summary>Delivers <paramref name="input"/> <paramref name="readSize"/> bytes at a time, as a pipe would.</summary>
    public static MqttOutcome Incremental(MqttParser parser, byte[] input, int readSize, bool segmentPerRead)
    {
        var packets = new List<string>();
        var reads = Sequences.Chunk(input, readSize);
        long consumed = 0;
        var received = 0;
        for (var r = 0; r < reads.Count; r++)
        {
            received += reads[r].Length;
            var buffered = segmentPerRead
                ? Sequences.FromChunks(reads.GetRange(0, r + 1)).Slice(consumed)
                : new ReadOnlySequence<byte>(input[(int)consumed..received]);
            var round = Run(parser, buffered);
            packets.AddRange(round.Packets);
            if (round.Final == MqttReadStatus.Error)
            {
                return new MqttOutcome(packets, round.Final, round.Error, -1);
            }

            consumed += buffered.Length - round.Unconsumed;
        }

        return new MqttOutcome(packets, MqttReadStatus.NeedMoreData, MqttParseError.None, input.Length - consumed);
    }

    /// <summary>A packet as text, every field the parser read, for comparing and for failure messages.</summary>
    public static string Describe(in MqttPacket packet)
    {
        var text = new StringBuilder(packet.Type.ToString().ToUpperInvariant());
        switch (packet.Type)
        {
            case MqttPacketType.Connect:
                text.Append($" level={packet.ProtocolLevel} flags=0x{(byte)packet.ConnectFlags:x2} keepalive={packet.KeepAlive} id={Str(packet.ClientId)}");
                if (packet.HasWill)
                {
                    text.Append($" will={Str(packet.WillTopic)}:{Str(packet.WillMessage)} q{packet.WillQoS} r{(packet.WillRetain ? 1 : 0)}");
                }

                if (packet.HasUserName)
                {
                    text.Append($" user={Str(packet.UserName)}");
                }

                if (packet.HasPassword)
                {
                    text.Append($" password={Convert.ToHexString(packet.Password)}");
                }

                if (!packet.WillProperties.IsEmpty)
                {
                    text.Append($" willprops={Convert.ToHexString(packet.WillProperties)}");
                }

                break;
            case MqttPacketType.Publish:
                text.Append($" q{packet.QoS} r{(packet.Retain ? 1 : 0)} d{(packet.Dup ? 1 : 0)} id={packet.PacketId} topic={Str(packet.Topic)} payload={Str(packet.Payload.ToArray())}");
                break;
            case MqttPacketType.Subscribe:
            case MqttPacketType.Unsubscribe:
                text.Append($" id={packet.PacketId}");
                foreach (var filter in packet.TopicFilters)
                {
                    text.Append($" {Str(filter.Filter)}");
                    if (packet.Type == MqttPacketType.Subscribe)
                    {
                        text.Append($":q{filter.QoS}");
                        if (filter.Options > 3)
                        {
                            text.Append($"o{filter.Options:x2}");
                        }
                    }
                }

                break;
            case MqttPacketType.PubAck:
            case MqttPacketType.PubRec:
            case MqttPacketType.PubRel:
            case MqttPacketType.PubComp:
                text.Append($" id={packet.PacketId}");
                break;
        }

        // MQTT 5.0 fields, only when present (3.1.1 descriptions are unchanged).
        if (packet.ReasonCode != 0)
        {
            text.Append($" rc=0x{packet.ReasonCode:x2}");
        }

        if (!packet.Properties.IsEmpty)
        {
            text.Append($" props={Convert.ToHexString(packet.Properties)}");
        }

        return text.ToString();
    }

    private static string Str(ReadOnlySpan<byte> bytes) => "\"" + Encoding.UTF8.GetString(bytes) + "\"";
}

/// <summary>What a run of <see cref="MqttParser.TryRead"/> calls produced.</summary>
internal sealed record MqttOutcome(IReadOnlyList<string> Packets, MqttReadStatus Final, MqttParseError Error, long Unconsumed)
{
    /// <summary>All input read as <paramref name="packets"/>, nothing left over.</summary>
    public static MqttOutcome Complete(params string[] packets) => new(packets, MqttReadStatus.NeedMoreData, MqttParseError.None, 0);

    /// <summary><paramref name="packets"/> read, then <paramref name="error"/>.</summary>
    public static MqttOutcome Rejected(MqttParseError error, params string[] packets) => new(packets, MqttReadStatus.Error, error, -1);

    public bool Equals(MqttOutcome? other) =>
        other is not null
        && Final == other.Final
        && Error == other.Error
        && Unconsumed == other.Unconsumed
        && Packets.SequenceEqual(other.Packets);

    public override int GetHashCode() => HashCode.Combine(Final, Error, Unconsumed, Packets.Count);

    public override string ToString() =>
        $"{Final} {Error} unconsumed {Unconsumed} after {Packets.Count} packet(s):" + string.Concat(Packets.Select(p => "\n    " + p));
}
