using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>Which MQTT broker a test runs against.</summary>
public enum MqttBrokerKind
{
    /// <summary>Courier's MQTT gateway.</summary>
    Courier,

    /// <summary>Debian's nats-server 2.9.10 with its MQTT listener (the reference for the NATS bridge).</summary>
    NatsServer,

    /// <summary>Debian's mosquitto (the reference for pure MQTT behaviour).</summary>
    Mosquitto,
}

/// <summary>
/// An MQTT broker process shared by one test class, on a free loopback port: Courier or nats-server
/// with <c>jetstream</c>, <c>server_name</c> and <c>mqtt { host, port }</c>, or mosquitto.
/// </summary>
public abstract class MqttFixture : IAsyncLifetime
{
    private MqttBrokerProcess? _broker;

    protected MqttFixture(MqttBrokerKind kind) => Kind = kind;

    public MqttBrokerKind Kind { get; }

    /// <summary>The MQTT port on 127.0.0.1.</summary>
    public int MqttPort => Broker.MqttPort;

    /// <summary>The NATS URL of the same server (null for mosquitto).</summary>
    public string? NatsUrl => Broker.NatsUrl;

    public MqttBrokerProcess Broker => _broker ?? throw new InvalidOperationException("the broker has not started");

    /// <summary>Starts another broker of this kind, with <paramref name="extraConfig"/> added to a NATS server's config.</summary>
    public Task<MqttBrokerProcess> StartAnotherAsync(string extraConfig = "", string mqttBlockExtra = "") =>
        MqttBrokerProcess.StartAsync(Kind, extraConfig, mqttBlockExtra);

    public async Task InitializeAsync() => _broker = await MqttBrokerProcess.StartAsync(Kind);

    public async Task DisposeAsync()
    {
        if (_broker is not null)
        {
            await _broker.DisposeAsync();
        }
    }
}

/// <summary>Courier with its MQTT listener.</summary>
public sealed class CourierMqttFixture() : MqttFixture(MqttBrokerKind.Courier);

/// <summary>nats-server 2.9.10 with its MQTT listener.</summary>
public sealed class NatsServerMqttFixture() : MqttFixture(MqttBrokerKind.NatsServer);

/// <summary>mosquitto.</summary>
public sealed class MosquittoFixture() : MqttFixture(MqttBrokerKind.Mosquitto);

/// <summary>One running MQTT broker process; disposing kills it by its id.</summary>
public sealed class MqttBrokerProcess : IAsyncDisposable
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(20);

    private readonly ServerProcess? _server;
    private readonly Process? _mosquitto;
    private readonly string _directory;
    private readonly bool _ownsDirectory;

    private MqttBrokerProcess(int mqttPort, ServerProcess? server, Process? mosquitto, string directory, bool ownsDirectory = true)
    {
        MqttPort = mqttPort;
        _server = server;
        _mosquitto = mosquitto;
        _directory = directory;
        _ownsDirectory = ownsDirectory;
    }

    public int MqttPort { get; }

    /// <summary>The folder of the broker's store (JetStream and journal for the NATS servers).</summary>
    public string Directory => _directory;

    /// <summary>Kills the server with SIGKILL (by its process id) and keeps its store folder.</summary>
    public async Task KillAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync(); // Process.Kill: SIGKILL on Linux
        }
    }

    /// <summary>
    /// Starts a server of <paramref name="kind"/> on an existing store <paramref name="directory"/>
    /// (after <see cref="KillAsync"/>), on <paramref name="mqttPort"/>, with <paramref name="extraConfig"/>
    /// added to its config; disposing it keeps the folder.
    /// </summary>
    public static async Task<MqttBrokerProcess> RestartAsync(MqttBrokerKind kind, string directory, int mqttPort, string extraConfig = "")
    {
        var server = await ServerProcess.StartAsync(
            kind == MqttBrokerKind.Courier ? ServerKind.Courier : ServerKind.NatsServer,
            NatsConfig(Path.Combine(directory, "js"), mqttPort, extraConfig));
        var started = new MqttBrokerProcess(mqttPort, server, null, directory, ownsDirectory: false);
        await started.WaitForPortAsync();
        return started;
    }

    public string? NatsUrl => _server?.Url;

    /// <summary>The NATS server process (its WebSocket and monitoring ports); null for mosquitto.</summary>
    public ServerProcess? Server => _server;

    /// <summary>For assertion messages: the server's log tail.</summary>
    public string Diagnostics() => _server?.Diagnostics() ?? $"mosquitto on {MqttPort}";

    /// <summary>The NATS server config that turns MQTT on, as both Courier and nats-server 2.9 accept it.</summary>
    public static string NatsConfig(string storeDir, int mqttPort, string extraConfig = "", string mqttBlockExtra = "", string jetStreamBlockExtra = "") => $$"""
        server_name: mqtt_test
        jetstream {
          store_dir: "{{storeDir}}"
          {{jetStreamBlockExtra}}
        }
        mqtt {
          host: 127.0.0.1
          port: {{mqttPort}}
          {{mqttBlockExtra}}
        }
        {{extraConfig}}
        """;

    public static async Task<MqttBrokerProcess> StartAsync(MqttBrokerKind kind, string extraConfig = "", string mqttBlockExtra = "", string jetStreamBlockExtra = "")
    {
        var directory = System.IO.Directory.CreateTempSubdirectory("courier-mqtt-").FullName;
        var port = LoopbackPorts.Next();
        if (kind == MqttBrokerKind.Mosquitto)
        {
            var conf = Path.Combine(directory, "mosquitto.conf");
            await File.WriteAllTextAsync(conf, $"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n");
            var process = Process.Start(new ProcessStartInfo("/usr/sbin/mosquitto", ["-c", conf])
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            }) ?? throw new InvalidOperationException("could not start mosquitto (apt-get install mosquitto)");
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            var broker = new MqttBrokerProcess(port, null, process, directory);
            await broker.WaitForPortAsync();
            return broker;
        }

        var server = await ServerProcess.StartAsync(
            kind == MqttBrokerKind.Courier ? ServerKind.Courier : ServerKind.NatsServer,
            NatsConfig(Path.Combine(directory, "js"), port, extraConfig, mqttBlockExtra, jetStreamBlockExtra));
        var started = new MqttBrokerProcess(port, server, null, directory);
        await started.WaitForPortAsync();
        return started;
    }

    private async Task WaitForPortAsync()
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, MqttPort);
                return;
            }
            catch (SocketException) when (clock.Elapsed < StartTimeout)
            {
                await Task.Delay(50);
            }
        }
    }


    public async ValueTask DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }

        if (_mosquitto is not null)
        {
            try
            {
                if (!_mosquitto.HasExited)
                {
                    _mosquitto.Kill();
                }

                using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                await _mosquitto.WaitForExitAsync(cts.Token);
            }
            catch (Exception e) when (e is InvalidOperationException or OperationCanceledException)
            {
            }

            _mosquitto.Dispose();
        }

        if (!_ownsDirectory)
        {
            return;
        }

        try
        {
            System.IO.Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
