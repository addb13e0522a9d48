using System.Text;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// MQTT 5.0 Request Problem Information and Request Response Information (issue 39), on raw sockets
/// against Courier and mosquitto 2.0: with Request Problem Information 0 no acknowledgement but CONNACK,
/// DISCONNECT and PUBLISH carries a Reason String or User Property [MQTT-3.1.2-29]; Response Information
/// comes only when asked for. What a server answers when asked is its own choice (the spec's MAY):
/// mosquitto sends none, Courier a NATS inbox prefix per session, tested on Courier alone.
/// </summary>
public abstract class Mqtt5InformationTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;

    protected Mqtt5InformationTests(TFixture broker) => _broker = broker;

    protected int Port => _broker.MqttPort;

    protected static string NewId(string role) => role + "-" + Guid.NewGuid().ToString("N")[..16];

    [Fact]
    public async Task Request_problem_information_0_leaves_acknowledgements_without_properties()
    {
        var topic = Subjects.NewPrefix().Replace('.', '/');
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("quiet"), Mqtt5Raw.Props([0x17, 0x00])));
        Assert.Equal(0, (await Mqtt5Raw.ReadConnAckAsync(raw)).Reason);

        // An UNSUBSCRIBE of a filter never subscribed: UNSUBACK 0x00 or 0x11, with an empty property list.
        await raw.SendAsync(Mqtt5Raw.Packet(0xA2, [0x00, 0x07], Mqtt5Raw.Props(), Mqtt5Raw.Str($"{topic}/never")));
        var (first, body) = await raw.ReadPacketAsync();
        Assert.Equal(0xB0, first);
        Assert.Equal(new byte[] { 0x00, 0x07, 0x00 }, body[..3]);
        Assert.Contains(body[3], new byte[] { 0x00, 0x11 });

        // A QoS 1 PUBLISH: PUBACK without properties.
        await raw.SendAsync(Mqtt5Raw.PublishQos1($"{topic}/x", 9, "x", Mqtt5Raw.Props()));
        (first, body) = await raw.ReadPacketAsync();
        Assert.Equal(0x40, first);
        Assert.True(body.Length <= 3 || body[3] == 0, $"PUBACK with properties: {Convert.ToHexString(body)}");
    }

    [Fact]
    public async Task A_connack_carries_no_response_information_unless_asked_for()
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(NewId("plain")));
        var (reason, properties) = await Mqtt5Raw.ReadConnAckAsync(raw);
        Assert.Equal(0, reason);
        Assert.False(properties.ContainsKey(0x1A));
    }

    // The CONNACK's Response Information (null: none) for a CONNECT that asks for it.
    protected async Task<string?> ResponseInformationAsync(string clientId)
    {
        await using var raw = await MqttRawClient.ConnectAsync(Port);
        await raw.SendAsync(Mqtt5Raw.Connect(clientId, Mqtt5Raw.Props([0x19, 0x01])));
        var (reason, properties) = await Mqtt5Raw.ReadConnAckAsync(raw);
        Assert.Equal(0, reason);
        return properties.TryGetValue(0x1A, out var value) ? Encoding.UTF8.GetString(value[2..]) : null;
    }
}

public sealed class Mqtt5InformationTests_Courier(CourierMqttFixture broker) : Mqtt5InformationTests<CourierMqttFixture>(broker)
{
    [Fact]
    public async Task Response_information_is_a_nats_inbox_prefix_of_the_session_the_same_at_every_connect()
    {
        var id = NewId("asks");
        var first = await ResponseInformationAsync(id);
        var again = await ResponseInformationAsync(id);
        var other = await ResponseInformationAsync(NewId("other"));

        Assert.NotNull(first);
        Assert.Matches("^_INBOX/[0-9a-f]{24}$", first);
        Assert.Equal(first, again);
        Assert.NotEqual(first, other);
    }
}

public sealed class Mqtt5InformationTests_Mosquitto(MosquittoFixture broker) : Mqtt5InformationTests<MosquittoFixture>(broker)
{
    [Fact]
    public async Task Mosquitto_sends_no_response_information_even_when_asked() =>
        Assert.Null(await ResponseInformationAsync(NewId("asks")));
}
