using System.Buffers;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Tests.Nats;
using Xunit;
using static Courier.Protocols.Tests.Mqtt.MqttBytes;

namespace Courier.Protocols.Tests.Mqtt;

/// <summary>
/// Hostile input: random bytes, valid packets cut short, and valid packets with one byte changed,
/// fed whole and in pieces. The parser must never throw, never read past its input, never consume
/// without producing a packet, and agree with itself however the bytes are split. Seeded, bounded.
/// </summary>
public sealed class MqttParserFuzzTests
{
    private const int Rounds = 2000; // inputs per test: bounded in count, each at most a few hundred bytes
    private const int Seed = 20261124; // fixed, so a failure reproduces

    private static readonly byte[][] Valid =
    [
        Connect("fuzz", willTopic: "w/t", willMessage: "bye", willQoS: 1, user: "u", password: [1, 2]),
        Publish("a/b/c", "payload", qos: 1, packetId: 7),
        Publish("x", new byte[200]),
        Subscribe(3, ("a/+", 1), ("b/#", 0)),
        Unsubscribe(4, "a/+"),
        Ack(0x40, 9),
        Ack(0x62, 9),
        PingReq,
        Disconnect,
    ];

    [Fact]
    public void Random_bytes_never_throw_and_always_end_in_a_packet_need_more_or_an_error()
    {
        var random = new Random(Seed);
        for (var i = 0; i < Rounds; i++)
        {
            var input = new byte[random.Next(1, 300)];
            random.NextBytes(input);
            if (random.Next(2) == 0)
            {
                input = Concat(MinimalConnect, input); // past the CONNECT gate too
            }

            AssertConsistent(input, random);
        }
    }

    [Fact]
    public void Valid_packets_cut_short_wait_for_more_and_never_yield_a_packet_they_do_not_hold()
    {
        foreach (var packet in Valid)
        {
            var stream = packet[0] >> 4 == 1 ? packet : Concat(MinimalConnect, packet);
            for (var cut = stream.Length - packet.Length; cut < stream.Length; cut++)
            {
                var outcome = MqttFeeds.Run(new MqttParser(), new ReadOnlySequence<byte>(stream[..cut]));
                Assert.Equal(MqttReadStatus.NeedMoreData, outcome.Final);
                Assert.Equal(stream.Length - packet.Length == 0 ? 0 : 1, outcome.Packets.Count);
            }
        }
    }

    [Fact]
    public void Valid_packets_with_one_byte_changed_never_throw()
    {
        var random = new Random(Seed);
        for (var i = 0; i < Rounds; i++)
        {
            var packet = Valid[random.Next(Valid.Length)];
            var input = packet[0] >> 4 == 1 ? packet.ToArray() : Concat(MinimalConnect, packet);
            var at = random.Next(input.Length);
            input[at] = (byte)random.Next(256);
            AssertConsistent(input, random);
        }
    }

    // Whole, and at a random split and byte by byte: the same outcome, and the reader contract holds (MqttFeeds.Run asserts it).
    private static void AssertConsistent(byte[] input, Random random)
    {
        var whole = MqttFeeds.Run(new MqttParser(maxPacketSize: 1024), new ReadOnlySequence<byte>(input));
        var split = MqttFeeds.Run(new MqttParser(maxPacketSize: 1024), Sequences.SplitAt(input, random.Next(input.Length + 1)));
        var bytes = MqttFeeds.Run(new MqttParser(maxPacketSize: 1024), Sequences.ByteByByte(input));
        Assert.Equal(whole, split);
        Assert.Equal(whole, bytes);
        Assert.True(whole.Final != MqttReadStatus.NeedMoreData || whole.Unconsumed <= input.Length);
    }
}
