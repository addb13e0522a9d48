using System.Net;
using System.Net.Sockets;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using MQTTnet;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>
/// <c>mqtt { tls { } }</c>, as nats-server 2.9.10: MQTT over TLS on the MQTT port, the handshake first,
/// with MQTTnet and mosquitto_pub/mosquitto_sub (<c>--cafile</c>), mutual TLS with <c>verify</c> and users
/// named by certificates with <c>verify_and_map</c>. Run against Courier and nats-server.
/// </summary>
public abstract class MqttTlsTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttFixture
{
    private readonly TFixture _broker;
    private readonly TlsCertificatesFixture _tls;

    protected MqttTlsTests(TFixture broker, TlsCertificatesFixture tls)
    {
        _broker = broker;
        _tls = tls;
    }

    private TestCertificates Certs => _tls.Certificates;

    private static string Topic(string rest) => $"{Subjects.NewPrefix().Replace('.', '/')}/{rest}";

    private string[] MosquittoTls(string? client = null) => client is null
        ? ["-h", "localhost", "--cafile", Certs.CaFile]
        : ["-h", "localhost", "--cafile", Certs.CaFile, "--cert", Certs.ClientCert(client), "--key", Certs.ClientKey(client)];

    private Action<MqttClientOptionsBuilder> MqttnetTls(string? client = null) => builder => builder.WithTlsOptions(tls =>
    {
        tls.UseTls()
            .WithTargetHost("localhost")
            .WithCertificateValidationHandler(args => _tls.TrustsServer(args.Certificate, args.SslPolicyErrors));
        if (client is not null)
        {
            tls.WithClientCertificates([Certs.LoadClient(client)]);
        }
    });

    [Fact]
    public async Task Mqttnet_publishes_and_subscribes_over_tls()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: _tls.TlsBlock());
        var topic = Topic("tls");
        await using var subscriber = await MqttTestClient.ConnectAsync(broker.MqttPort, "sub-" + Guid.NewGuid().ToString("N"), MqttnetTls());
        await subscriber.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await using var publisher = await MqttTestClient.ConnectAsync(broker.MqttPort, "pub-" + Guid.NewGuid().ToString("N"), MqttnetTls());

        await publisher.PublishAsync(topic, "over tls", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisher.PublishAsync(topic, "qos 0 too");

        // Both, in either order: nats-server delivers QoS 1 through JetStream and QoS 0 directly, so the
        // second may overtake the first (MQTT orders messages per QoS level, not across them).
        var received = new[] { await subscriber.ReceiveAsync(), await subscriber.ReceiveAsync() };
        Assert.Equal(
            new[] { new MqttReceived(topic, "over tls", 1, false), new MqttReceived(topic, "qos 0 too", 0, false) },
            received.OrderBy(m => m.Payload, StringComparer.Ordinal));
    }

    [Fact]
    public async Task Mosquitto_pub_reaches_mosquitto_sub_over_tls_with_cafile()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: _tls.TlsBlock());
        var topic = Topic("mosquitto");
        var subscriber = await MosquittoClients.SubscribeAsync(broker.MqttPort, topic, count: 2, qos: 1, extraArgs: MosquittoTls());

        Assert.Equal(0, await MosquittoClients.PublishAsync(broker.MqttPort, topic, "one", qos: 1, extraArgs: MosquittoTls()));
        Assert.Equal(0, await MosquittoClients.PublishAsync(broker.MqttPort, topic, "two", extraArgs: MosquittoTls()));

        Assert.Equal([$"{topic} one", $"{topic} two"], await subscriber.MessagesAsync());
    }

    [Fact]
    public async Task A_plain_mqtt_connect_on_the_tls_port_gets_no_connack_and_is_closed_with_a_tls_handshake_error()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: _tls.TlsBlock());
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, broker.MqttPort), cts.Token);

        await socket.SendAsync(MqttRawClient.Connect("plain-" + Guid.NewGuid().ToString("N")), SocketFlags.None, cts.Token);

        // A TLS alert may come back, never a CONNACK (0x20); then the server closes.
        var received = new List<byte>();
        var buffer = new byte[256];
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token)) > 0)
            {
                received.AddRange(buffer.AsSpan(0, read));
            }
        }
        catch (SocketException)
        {
            // reset: closed as well
        }

        Assert.True(received.Count == 0 || received[0] == 0x15, $"expected nothing or a TLS alert, got {Convert.ToHexString([.. received])}");
        await ExpectLogAsync(broker, "TLS handshake error");
        Assert.Matches(@"127\.0\.0\.1:\d+ - mid:\d+ - TLS handshake error", broker.Diagnostics());

        await using var good = await MqttTestClient.ConnectAsync(broker.MqttPort, "good-" + Guid.NewGuid().ToString("N"), MqttnetTls());
        Assert.True(good.Client.IsConnected);
    }

    [Fact]
    public async Task Verify_accepts_a_client_certificate_from_the_ca_and_refuses_a_client_without_one()
    {
        await using var broker = await _broker.StartAnotherAsync(mqttBlockExtra: _tls.VerifyBlock());
        var topic = Topic("verify");
        var subscriber = await MosquittoClients.SubscribeAsync(broker.MqttPort, topic, count: 1, extraArgs: MosquittoTls("alice"));
        Assert.Equal(0, await MosquittoClients.PublishAsync(broker.MqttPort, topic, "mutual", extraArgs: MosquittoTls("alice")));
        Assert.Equal([$"{topic} mutual"], await subscriber.MessagesAsync());

        Assert.NotEqual(0, await MosquittoClients.PublishAsync(broker.MqttPort, topic, "anonymous", extraArgs: MosquittoTls()));
        await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await using var anonymous = await MqttTestClient.ConnectAsync(broker.MqttPort, "anon-" + Guid.NewGuid().ToString("N"), MqttnetTls());
        });
        await ExpectLogAsync(broker, "TLS handshake error");
    }

    [Fact]
    public async Task Verify_and_map_names_the_mqtt_client_by_its_certificate_and_refuses_a_certificate_naming_nobody()
    {
        var users = $$"""
            authorization {
              users = [
                { user: "{{TestCertificates.AliceSubject}}", permissions: { publish: ["alice.>"], subscribe: ["alice.>", "$MQTT.sub.>"] } }
              ]
            }
            """;
        await using var broker = await _broker.StartAnotherAsync(users, _tls.VerifyBlock("verify_and_map: true"));

        await using var alice = await MqttTestClient.ConnectAsync(broker.MqttPort, "alice-" + Guid.NewGuid().ToString("N"), MqttnetTls("alice"));
        await alice.SubscribeAsync("alice/inbox");
        await alice.PublishAsync("alice/inbox", "mine");
        Assert.Equal(new MqttReceived("alice/inbox", "mine", 0, false), await alice.ReceiveAsync());

        // The handshake succeeds (mallory's certificate is from the CA); the CONNECT is refused with CONNACK 5.
        Assert.Equal(MqttClientConnectResultCode.NotAuthorized, await ConnectResultAsync(broker.MqttPort, MqttnetTls("mallory")));
    }

    /// <summary>What the broker answers to a CONNECT (the CONNACK's code, as MQTTnet reports it).</summary>
    private static async Task<MqttClientConnectResultCode> ConnectResultAsync(int port, Action<MqttClientOptionsBuilder> configure)
    {
        using var client = new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", port)
            .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V311)
            .WithClientId("c-" + Guid.NewGuid().ToString("N"))
            .WithTimeout(MqttTestClient.TestTimeout);
        configure(builder);
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        return (await client.ConnectAsync(builder.Build(), cts.Token)).ResultCode;
    }

    /// <summary>Waits (bounded) for the broker to log a line containing <paramref name="text"/>.</summary>
    private static async Task ExpectLogAsync(MqttBrokerProcess broker, string text)
    {
        for (var i = 0; i < 100 && !broker.Diagnostics().Contains(text, StringComparison.Ordinal); i++)
        {
            await Task.Delay(100);
        }

        Assert.True(broker.Diagnostics().Contains(text, StringComparison.Ordinal), $"no log line with \"{text}\"\n{broker.Diagnostics()}");
    }
}

[Trait("server", "nats-server")]
public sealed class MqttTlsTests_NatsServer(NatsServerMqttFixture broker, TlsCertificatesFixture tls)
    : MqttTlsTests<NatsServerMqttFixture>(broker, tls), IClassFixture<TlsCertificatesFixture>;

[Trait("server", "courier")]
public sealed class MqttTlsTests_Courier(CourierMqttFixture broker, TlsCertificatesFixture tls)
    : MqttTlsTests<CourierMqttFixture>(broker, tls), IClassFixture<TlsCertificatesFixture>;
