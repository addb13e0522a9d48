using System.Text.Json.Nodes;
using Courier.Integration.Tests.Identity;
using Courier.Integration.Tests.Infrastructure;
using MQTTnet.Protocol;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>A broker whose users live in accounts: A and B with JetStream, C without; no_auth_user in A.</summary>
public abstract class MqttAccountsFixture(MqttBrokerKind kind) : IAsyncLifetime
{
    public MqttBrokerKind Kind => kind;

    /// <summary>The accounts block both NATS servers take.</summary>
    public const string Accounts = """
        accounts {
          A {
            jetstream: enabled
            users = [
              { user: a, password: a }
              { user: anon, password: anon }
              { user: ap, password: ap, permissions: { publish: "open.>", subscribe: "open.>" } }
            ]
          }
          B { jetstream: enabled, users = [ { user: b, password: b } ] }
          C { users = [ { user: c, password: c } ] }
        }
        no_auth_user: anon
        """;

    private MqttBrokerProcess? _broker;

    public MqttBrokerProcess Broker => _broker ?? throw new InvalidOperationException("the broker has not started");

    public async Task InitializeAsync() => _broker = await MqttBrokerProcess.StartAsync(kind, Accounts);

    public async Task DisposeAsync()
    {
        if (_broker is not null)
        {
            await _broker.DisposeAsync();
        }
    }
}

public sealed class CourierMqttAccountsFixture() : MqttAccountsFixture(MqttBrokerKind.Courier);

public sealed class NatsServerMqttAccountsFixture() : MqttAccountsFixture(MqttBrokerKind.NatsServer);

/// <summary>
/// MQTT clients in accounts (issue 39), against Courier and nats-server 2.9.10 (mosquitto has no NATS
/// accounts): a user of an account publishes and subscribes in that account's subject space only, with
/// its permissions; client ids, persistent sessions and retained messages are per account;
/// <c>no_auth_user</c> lands in its user's account; an account without JetStream is refused.
/// Absence is shown by order, never by waiting: a marker published after the message that must not
/// arrive is the first thing the other side gets.
/// </summary>
public abstract class MqttAccountTests<TFixture> : IClassFixture<TFixture>
    where TFixture : MqttAccountsFixture
{
    private readonly TFixture _fixture;

    protected MqttAccountTests(TFixture fixture) => _fixture = fixture;

    private MqttBrokerProcess Broker => _fixture.Broker;

    private static string NewId(string prefix) => prefix + "-" + Guid.NewGuid().ToString("N")[..16];

    private Task<MqttTestClient> MqttAs(string user, string? id = null, bool cleanSession = true) =>
        MqttTestClient.ConnectAsync(Broker.MqttPort, id ?? NewId(user), b => b.WithCredentials(user, user), cleanSession);

    private async Task<NatsConnection> NatsAs(string user)
    {
        var nats = new NatsConnection(new NatsOpts
        {
            Url = Broker.NatsUrl!,
            AuthOpts = new NatsAuthOpts { Username = user, Password = user },
            MaxReconnectRetry = 0,
        });
        await nats.ConnectAsync();
        return nats;
    }

    private const string NotEnabled = "lookup sessions stream for account \"C\": JetStream not enabled for account";

    // The CONNACK's result code; a connection closed without one counts as unspecified error.
    private Task<MQTTnet.MqttClientConnectResultCode> ConnectResultAsync(string user) => ConnectResultAsync(Broker.MqttPort, user, user);

    private static async Task<MQTTnet.MqttClientConnectResultCode> ConnectResultAsync(int port, string user, string password)
    {
        using var client = new MQTTnet.MqttClientFactory().CreateMqttClient();
        var options = new MQTTnet.MqttClientOptionsBuilder()
            .WithTcpServer("127.0.0.1", port)
            .WithProtocolVersion(MQTTnet.Formatter.MqttProtocolVersion.V311)
            .WithClientId(NewId("c"))
            .WithCredentials(user, password)
            .WithTimeout(MqttTestClient.TestTimeout)
            .Build();
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        try
        {
            return (await client.ConnectAsync(options, cts.Token)).ResultCode;
        }
        catch (MQTTnet.Exceptions.MqttCommunicationException)
        {
            return MQTTnet.MqttClientConnectResultCode.UnspecifiedError;
        }
    }

    [Fact]
    public async Task An_mqtt_client_publishes_and_subscribes_in_its_users_account_only()
    {
        var p = Subjects.NewPrefix();
        var topic = p.Replace('.', '/');
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        await using var natsA = await NatsAs("a");
        await using var natsB = await NatsAs("b");
        await using var subA = await natsA.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await using var subB = await natsB.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await natsA.PingAsync(cts.Token);
        await natsB.PingAsync(cts.Token);
        await using var mqttA = await MqttAs("a");
        await using var mqttB = await MqttAs("b");
        await using var listenerA = await MqttAs("a");
        await listenerA.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);

        await mqttA.PublishAsync($"{topic}/x", "in A", MqttQualityOfServiceLevel.AtLeastOnce);
        await mqttB.PublishAsync($"{topic}/x", "in B", MqttQualityOfServiceLevel.AtLeastOnce);
        await natsA.PublishAsync($"{p}.marker", "marker A", cancellationToken: cts.Token);

        // A's NATS subscriber: A's message, then A's marker (B's message, published before it, never came).
        var first = await subA.Msgs.ReadAsync(cts.Token);
        Assert.Equal(($"{p}.x", "in A"), (first.Subject, first.Data));
        Assert.Equal("marker A", (await subA.Msgs.ReadAsync(cts.Token)).Data);

        // B's: B's message first (A's, published before it, never came).
        Assert.Equal("in B", (await subB.Msgs.ReadAsync(cts.Token)).Data);

        // An MQTT subscriber of A: the same.
        Assert.Equal(new MqttReceived($"{topic}/x", "in A", 1, false), await listenerA.ReceiveAsync());
        Assert.Equal(new MqttReceived($"{topic}/marker", "marker A", 0, false), await listenerA.ReceiveAsync());
    }

    [Fact]
    public async Task An_account_users_permissions_apply_to_its_topics()
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var id = Guid.NewGuid().ToString("N")[..12];
        await using var natsA = await NatsAs("a");
        await using var sub = await natsA.SubscribeCoreAsync<string>($"*.{id}", cancellationToken: cts.Token);
        await natsA.PingAsync(cts.Token);
        await using var limited = await MqttAs("ap");

        await limited.PublishAsync($"closed/{id}", "denied", MqttQualityOfServiceLevel.AtLeastOnce);
        await limited.PublishAsync($"open/{id}", "allowed", MqttQualityOfServiceLevel.AtLeastOnce);

        var first = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal(($"open.{id}", "allowed"), (first.Subject, first.Data));
    }

    [Fact]
    public async Task The_same_client_id_in_two_accounts_is_two_sessions_and_neither_takes_the_other_over()
    {
        var id = NewId("shared-id");
        var topic = Subjects.NewPrefix().Replace('.', '/');
        await using var inA = await MqttAs("a", id);
        await using var inB = await MqttAs("b", id);
        await inA.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await inB.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);

        // Both are still connected: each gets its own message (a take-over would have closed A's).
        await inA.PublishAsync(topic, "from A", MqttQualityOfServiceLevel.AtLeastOnce);
        await inB.PublishAsync(topic, "from B", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived(topic, "from A", 1, false), await inA.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "from B", 1, false), await inB.ReceiveAsync());
        Assert.True(inA.Client.IsConnected);
    }

    [Fact]
    public async Task Retained_messages_are_kept_per_account()
    {
        var topic = Subjects.NewPrefix().Replace('.', '/');
        await using (var publisherA = await MqttAs("a"))
        {
            await publisherA.PublishAsync($"{topic}/x", "retained in A", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
        }

        await using var publisherB = await MqttAs("b");
        await publisherB.PublishAsync($"{topic}/y", "retained in B", MqttQualityOfServiceLevel.AtLeastOnce, retain: true);
        await using var subscriberB = await MqttAs("b");
        await subscriberB.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisherB.PublishAsync($"{topic}/z", "live in B", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived($"{topic}/y", "retained in B", 1, true), await subscriberB.ReceiveAsync());
        Assert.Equal(new MqttReceived($"{topic}/z", "live in B", 1, false), await subscriberB.ReceiveAsync());

        await using var subscriberA = await MqttAs("a");
        await subscriberA.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
        Assert.Equal(new MqttReceived($"{topic}/x", "retained in A", 1, true), await subscriberA.ReceiveAsync());
    }

    [Fact]
    public async Task A_persistent_session_keeps_the_messages_of_its_own_account_only()
    {
        var topic = Subjects.NewPrefix().Replace('.', '/');
        var id = NewId("kept");
        await using (var first = await MqttAs("a", id, cleanSession: false))
        {
            await first.SubscribeAsync($"{topic}/#", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using (var publisherB = await MqttAs("b"))
        {
            await publisherB.PublishAsync($"{topic}/x", "from B", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using (var publisherA = await MqttAs("a"))
        {
            await publisherA.PublishAsync($"{topic}/x", "from A", MqttQualityOfServiceLevel.AtLeastOnce);
        }

        await using var again = await MqttAs("a", id, cleanSession: false);
        Assert.True(again.SessionPresent);
        Assert.Equal(new MqttReceived($"{topic}/x", "from A", 1, false), await again.ReceiveAsync());

        // The same client id in B has no session.
        await using var inB = await MqttAs("b", id, cleanSession: false);
        Assert.False(inB.SessionPresent);
    }

    [Fact]
    public async Task A_client_without_credentials_is_the_no_auth_user_in_its_account()
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var p = Subjects.NewPrefix();
        await using var natsA = await NatsAs("a");
        await using var sub = await natsA.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await natsA.PingAsync(cts.Token);
        await using var anonymous = await MqttTestClient.ConnectAsync(Broker.MqttPort, NewId("anon"));

        await anonymous.PublishAsync($"{p.Replace('.', '/')}/n", "anonymous", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal("anonymous", (await sub.Msgs.ReadAsync(cts.Token)).Data);
    }

    private static void WithJetStream(JsonObject nats)
    {
        var limits = nats["limits"]!.AsObject();
        limits["mem_storage"] = -1;
        limits["disk_storage"] = -1;
        limits["streams"] = -1;
        limits["consumer"] = -1;
    }

    private static TestUser Bearer(TestAccount account, long expires = 0, long? issuedAt = null) =>
        TestOperator.NewUser(account, nats => nats["bearer_token"] = true, expires, issuedAt);

    // Bounded wait for the server to close an MQTT client (10 s).
    private static async Task WaitUntilClosedAsync(MqttTestClient client)
    {
        for (var i = 0; i < 100 && client.Client.IsConnected; i++)
        {
            await Task.Delay(100);
        }

        Assert.False(client.Client.IsConnected);
    }

    [Fact]
    public async Task An_operator_mode_mqtt_client_is_closed_when_its_user_JWT_expires()
    {
        var op = new TestOperator();
        var a = op.NewAccount("A", WithJetStream);
        await using var broker = await MqttBrokerProcess.StartAsync(_fixture.Kind, op.Config([a]));
        await using var client = await MqttTestClient.ConnectAsync(broker.MqttPort, NewId("exp"), o => o.WithCredentials("any", Bearer(a, expires: TestJwt.Now + 2).Jwt));
        Assert.True(client.Client.IsConnected);

        await WaitUntilClosedAsync(client);
    }

    [Fact]
    public async Task A_pushed_account_JWT_revoking_an_mqtt_clients_user_closes_it()
    {
        var op = new TestOperator();
        var a = op.NewAccount("A", WithJetStream);
        var dir = Directory.CreateTempSubdirectory("courier-mqtt-claims-").FullName;
        try
        {
            await using var broker = await MqttBrokerProcess.StartAsync(_fixture.Kind, op.DirectoryConfig([a], dir));
            var user = Bearer(a, issuedAt: TestJwt.Now - 60);
            await using var client = await MqttTestClient.ConnectAsync(broker.MqttPort, NewId("rev"), o => o.WithCredentials("any", user.Jwt));
            var system = TestOperator.NewUser(op.System);
            await using var sys = new NatsConnection(new NatsOpts
            {
                Url = broker.NatsUrl!,
                MaxReconnectRetry = 0,
                RequestTimeout = TimeSpan.FromSeconds(10),
                AuthOpts = new NatsAuthOpts { Jwt = system.Jwt, Seed = system.Key.GetSeed() },
            });
            await sys.ConnectAsync();
            Assert.True(client.Client.IsConnected);

            var revoking = op.ReissueAccount(a, "A", nats =>
            {
                WithJetStream(nats);
                nats["revocations"] = new JsonObject { [user.PublicKey] = TestJwt.Now };
            });
            var reply = await sys.RequestAsync<string, string>("$SYS.REQ.CLAIMS.UPDATE", revoking.Jwt);
            Assert.Contains("\"code\":200", reply.Data, StringComparison.Ordinal);

            await WaitUntilClosedAsync(client);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task An_operator_mode_user_logs_in_with_its_bearer_JWT_as_the_password_and_lands_in_its_account()
    {

        var op = new TestOperator();
        var a = op.NewAccount("A", WithJetStream);
        var b = op.NewAccount("B", WithJetStream);
        await using var broker = await MqttBrokerProcess.StartAsync(_fixture.Kind, op.Config([a, b]));
        Task<MqttTestClient> Connect(TestUser user) =>
            MqttTestClient.ConnectAsync(broker.MqttPort, NewId("jwt"), o => o.WithCredentials("any", user.Jwt));
        var topic = Subjects.NewPrefix().Replace('.', '/');
        await using var subscriberA = await Connect(Bearer(a));
        await using var subscriberB = await Connect(Bearer(b));
        await subscriberA.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await subscriberB.SubscribeAsync(topic, MqttQualityOfServiceLevel.AtLeastOnce);
        await using var publisherA = await Connect(Bearer(a));
        await using var publisherB = await Connect(Bearer(b));

        await publisherB.PublishAsync(topic, "in B", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisherA.PublishAsync(topic, "in A", MqttQualityOfServiceLevel.AtLeastOnce);
        await publisherB.PublishAsync(topic, "marker B", MqttQualityOfServiceLevel.AtLeastOnce);

        Assert.Equal(new MqttReceived(topic, "in A", 1, false), await subscriberA.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "in B", 1, false), await subscriberB.ReceiveAsync());
        Assert.Equal(new MqttReceived(topic, "marker B", 1, false), await subscriberB.ReceiveAsync());

        // A user JWT that is no bearer token needs a signature of a nonce MQTT has no place for.
        Assert.Equal(MQTTnet.MqttClientConnectResultCode.NotAuthorized, await ConnectResultAsync(broker.MqttPort, "any", TestOperator.NewUser(a).Jwt));
    }

    [Fact]
    public async Task A_user_of_an_account_without_jetstream_is_refused()
    {
        // nats-server keeps MQTT sessions in the account's JetStream: "JetStream not enabled for account".
        // It closes the connection; Courier answers CONNACK 0x03 (server unavailable) first.
        Assert.NotEqual(MQTTnet.MqttClientConnectResultCode.Success, await ConnectResultAsync("c"));
        for (var i = 0; i < 100 && !Broker.Diagnostics().Contains(NotEnabled, StringComparison.Ordinal); i++)
        {
            await Task.Delay(100); // the log line is written as the connection closes
        }

        Assert.Contains(NotEnabled, Broker.Diagnostics(), StringComparison.Ordinal);

        // The other accounts still take clients.
        await using var fine = await MqttAs("a");
        Assert.True(fine.Client.IsConnected);
    }
}

public sealed class MqttAccountTests_Courier(CourierMqttAccountsFixture fixture) : MqttAccountTests<CourierMqttAccountsFixture>(fixture);

public sealed class MqttAccountTests_NatsServer(NatsServerMqttAccountsFixture fixture) : MqttAccountTests<NatsServerMqttAccountsFixture>(fixture);
