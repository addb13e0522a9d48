using Courier.Integration.Tests.Infrastructure;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// Fuzz-style hostile input on live sockets: malformed packets, random bytes and truncated packets
/// after a CONNECT (keep-alive 1 s, so a client that stops mid-packet is closed too). Each hostile
/// client must be closed; a healthy publisher and subscriber keep working throughout, and the node
/// accepts new clients afterwards. Against Courier and both references.
/// </summary>
public abstract class MqttHostileInputTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private const int RandomClients = 40;
    private const int Parallelism = 8; // hostile sockets open at once: bounds the time on 2 shared cores

    private readonly TFixture _broker;

    protected MqttHostileInputTests(TFixture broker) => _broker = broker;

    private int Port => _broker.MqttPort;

    [Fact]
    public async Task Malformed_random_and_truncated_packets_close_only_their_client_and_the_node_keeps_serving()
    {
        var topic = Subjects.NewPrefix().Replace('.', '/') + "/healthy";
        await using var subscriber = await MqttTestClient.ConnectAsync(Port, "healthy-sub-" + Guid.NewGuid().ToString("N"));
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await using var publisher = await MqttTestClient.ConnectAsync(Port, "healthy-pub-" + Guid.NewGuid().ToString("N"));
        await publisher.PublishAsync(topic, "before", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal("before", (await subscriber.ReceiveAsync()).Payload);

        var inputs = new List<(string Name, byte[] Bytes, bool CloseWrite)>
        {
            ("reserved type 0", [0x00, 0x00], false),
            ("reserved type 15", [0xF0, 0x00], false),
            ("SUBSCRIBE with reserved flags 0", [0x80, 0x06, 0x00, 0x01, 0x00, 0x01, (byte)'a', 0x00], false),
            ("PUBLISH at QoS 3", [0x36, 0x05, 0x00, 0x01, (byte)'a', 0x00, 0x01], false),
            ("remaining length of five bytes", [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], false),
            ("second CONNECT", MqttRawClient.Connect("again"), false),
            ("SUBSCRIBE without filters", [0x82, 0x02, 0x00, 0x01], false),
            ("SUBSCRIBE with QoS 3", [0x82, 0x06, 0x00, 0x01, 0x00, 0x01, (byte)'a', 0x03], false),
            ("PUBLISH topic longer than the packet", [0x30, 0x03, 0x00, 0x09, (byte)'a'], false),
            ("PUBLISH with a wildcard topic", [0x30, 0x04, 0x00, 0x01, (byte)'#', (byte)'x'], false),
        };

        var random = new Random(20261124); // seeded: a failure can be replayed
        byte[][] valid =
        [
            MqttRawClient.Publish(topic, "truncated payload", qos: 1, packetId: 3),
            [0x82, 0x08, 0x00, 0x02, 0x00, 0x03, (byte)'a', (byte)'/', (byte)'b', 0x01],
            [0xA2, 0x05, 0x00, 0x04, 0x00, 0x01, (byte)'a'],
        ];
        for (var i = 0; i < RandomClients; i++)
        {
            if (i % 2 == 0)
            {
                var bytes = new byte[random.Next(1, 200)];
                random.NextBytes(bytes);
                inputs.Add(($"random #{i}", bytes, false));
            }
            else
            {
                var packet = valid[random.Next(valid.Length)];
                inputs.Add(($"truncated #{i}", packet[..random.Next(1, packet.Length)], true));
            }
        }

        using var gate = new SemaphoreSlim(Parallelism);
        var hostile = inputs.Select(async input =>
        {
            await gate.WaitAsync();
            try
            {
                await using var raw = await MqttRawClient.ConnectAsync(Port);
                await raw.SendAsync(MqttRawClient.Connect("hostile-" + Guid.NewGuid().ToString("N"), keepAlive: 1));
                Assert.Equal(new byte[] { 0x20, 0x02, 0x00, 0x00 }, await raw.ReadAsync(4));
                await raw.SendAsync(input.Bytes);
                if (input.CloseWrite)
                {
                    raw.ShutdownWrite();
                }

                // Closed by the server: protocol error, end of stream, or 1.5 x keep-alive of silence.
                var closed = await Record.ExceptionAsync(raw.ReadUntilClosedAsync);
                Assert.True(closed is null, $"{input.Name}: not closed ({closed?.GetType().Name})");
            }
            finally
            {
                gate.Release();
            }
        });
        await Task.WhenAll(hostile);

        await publisher.PublishAsync(topic, "after", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal("after", (await subscriber.ReceiveAsync()).Payload);
        await using var newcomer = await MqttTestClient.ConnectAsync(Port, "newcomer-" + Guid.NewGuid().ToString("N"));
        Assert.True(newcomer.Client.IsConnected);
    }
}

public sealed class MqttHostileInputTests_Courier(CourierMqttFixture broker) : MqttHostileInputTests<CourierMqttFixture>(broker);

public sealed class MqttHostileInputTests_Mosquitto(MosquittoFixture broker) : MqttHostileInputTests<MosquittoFixture>(broker);

public sealed class MqttHostileInputTests_NatsServer(NatsServerMqttFixture broker) : MqttHostileInputTests<NatsServerMqttFixture>(broker);
