using System.Net;
using System.Net.Sockets;
using System.Text;
using Akka.Actor;
using Courier.Actors.Server;
using Xunit;

namespace Courier.Actors.Tests.Server;

/// <summary>
/// A broker fed by a loopback listener, for actor-level tests with real sockets and no process.
/// Its actors run in the test's actor system (a TestKit's <c>Sys</c>), so probes can watch and kill them.
/// </summary>
internal sealed class BrokerHarness : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly TcpListener _mqttListener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private Task _acceptLoop = Task.CompletedTask;

    private BrokerHarness(ServerOptions options)
    {
        Broker = new Broker(options);
    }

    /// <summary>Starts a broker with <paramref name="options"/> in <paramref name="system"/> (configured with <see cref="TestConfig.For"/>).</summary>
    public static Task<BrokerHarness> StartAsync(ActorSystem system, ServerOptions? options = null) => StartCoreAsync(system, options);

    /// <summary>Starts a broker with an actor system of its own, as the server does.</summary>
    public static Task<BrokerHarness> StartAsync(ServerOptions? options = null) => StartCoreAsync(null, options);

    private static async Task<BrokerHarness> StartCoreAsync(ActorSystem? system, ServerOptions? options)
    {
        var harness = new BrokerHarness(options ?? new ServerOptions { Host = "127.0.0.1" });
        await harness.Broker.StartAsync(system);
        harness.Listen();
        return harness;
    }

    private void Listen()
    {
        _listener.Start();
        var nats = AcceptLoop(_listener, Broker.Accept);
        if (Broker.Options.Mqtt is null)
        {
            _acceptLoop = nats;
            return;
        }

        _mqttListener.Start();
        _acceptLoop = Task.WhenAll(nats, AcceptLoop(_mqttListener, Broker.AcceptMqtt));
    }

    private Task AcceptLoop(TcpListener listener, Action<Socket> accept) => Task.Run(async () =>
    {
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                accept(await listener.AcceptSocketAsync(_stop.Token));
            }
            catch (Exception e) when (e is OperationCanceledException || (_stop.IsCancellationRequested && e is ObjectDisposedException or SocketException))
            {
                return; // stopped: the listener may close under a pending accept before it sees the cancellation
            }
        }
    });

    /// <summary>The MQTT listener's port (options with an <c>mqtt</c> block only).</summary>
    public int MqttPort => ((IPEndPoint)_mqttListener.LocalEndpoint).Port;

    public Broker Broker { get; }

    public async Task<LineClient> ConnectAsync(string connectJson = "{\"verbose\":false,\"headers\":true,\"no_responders\":true}")
    {
        var client = new LineClient(((IPEndPoint)_listener.LocalEndpoint).Port);
        var info = await client.ReadLineAsync();
        Assert.StartsWith("INFO ", info, StringComparison.Ordinal);
        await client.SendAsync($"CONNECT {connectJson}\r\nPING\r\n");
        Assert.Equal("PONG", await client.ReadLineAsync());
        return client;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        if (Broker.Options.Mqtt is not null)
        {
            _mqttListener.Stop();
        }
        await _acceptLoop;
        await Broker.DisposeAsync();
        _stop.Dispose();
    }
}

/// <summary>A raw NATS client that reads CRLF-terminated lines, with bounded waits.</summary>
internal sealed class LineClient : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);
    private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly byte[] _buffer = new byte[64 * 1024];
    private readonly StringBuilder _pending = new();

    public LineClient(int port)
    {
        _socket.Connect(IPAddress.Loopback, port);
    }

    public Task SendAsync(string text) => _socket.SendAsync(Encoding.UTF8.GetBytes(text), SocketFlags.None);

    /// <summary>The next line without its CRLF; null when the server closed the connection.</summary>
    public async Task<string?> ReadLineAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? Timeout);
        while (true)
        {
            var text = _pending.ToString();
            var end = text.IndexOf("\r\n", StringComparison.Ordinal);
            if (end >= 0)
            {
                _pending.Remove(0, end + 2);
                return text[..end];
            }

            int n;
            try
            {
                n = await _socket.ReceiveAsync(_buffer, SocketFlags.None, cts.Token);
            }
            catch (SocketException)
            {
                return null;
            }

            if (n == 0)
            {
                return null;
            }

            _pending.Append(Encoding.UTF8.GetString(_buffer, 0, n));
        }
    }

    /// <summary>Reads lines until one equals <paramref name="expected"/>; fails on close or timeout.</summary>
    public async Task ExpectLineAsync(string expected)
    {
        while (true)
        {
            var line = await ReadLineAsync() ?? throw new Xunit.Sdk.XunitException($"connection closed while waiting for '{expected}'");
            if (line == expected)
            {
                return;
            }
        }
    }

    /// <summary>True when the server closes the connection within the timeout (lines before are skipped).</summary>
    public async Task<bool> IsClosedByServerAsync()
    {
        try
        {
            while (await ReadLineAsync() is not null)
            {
            }

            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    public void Dispose() => _socket.Dispose();
}
