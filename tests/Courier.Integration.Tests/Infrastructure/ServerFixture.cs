namespace Courier.Integration.Tests.Infrastructure;

/// <summary>
/// A server process shared by the tests of one class (xunit class fixture). The concrete kinds,
/// <see cref="NatsServerFixture"/> and <see cref="CourierFixture"/>, run the same tests against the
/// reference server and against Courier. Tests that need their own configuration start a
/// per-test server of the same kind with <see cref="StartServerAsync"/>.
/// </summary>
public abstract class ServerFixture : IAsyncLifetime
{
    private ServerProcess? _server;

    protected ServerFixture(ServerKind kind)
    {
        Kind = kind;
    }

    /// <summary>Which server this fixture runs.</summary>
    public ServerKind Kind { get; }

    /// <summary>The shared server process.</summary>
    public ServerProcess Server => _server ?? throw new InvalidOperationException("the fixture's server has not started");

    /// <summary>The shared server's client port on 127.0.0.1.</summary>
    public int Port => Server.Port;

    /// <summary>The shared server's monitoring port on 127.0.0.1.</summary>
    public int MonitorPort => Server.MonitorPort;

    /// <summary>The shared server's client URL.</summary>
    public string Url => Server.Url;

    /// <summary>The shared server's recent stdout/stderr.</summary>
    public string LogTail(int lines = 40) => Server.Log.Tail(lines);

    /// <summary>The configuration file of the shared server, or null to start it without <c>-c</c>.</summary>
    protected virtual string? ConfigText => null;

    /// <summary>Starts a separate server of this fixture's kind, for a test that needs its own
    /// configuration; the caller disposes it (<c>await using</c>).</summary>
    public Task<ServerProcess> StartServerAsync(string? configText = null, params string[] extraArgs) =>
        ServerProcess.StartAsync(Kind, configText, extraArgs);

    /// <summary>
    /// Runs <paramref name="test"/> against a separate server of this kind started with <c>-js</c> on a
    /// store directory of its own, which is deleted afterwards.
    /// </summary>
    public async Task WithJetStreamAsync(Func<ServerProcess, Task> test, string? configText = null)
    {
        ArgumentNullException.ThrowIfNull(test);
        var storeDir = Directory.CreateTempSubdirectory("courier-js-").FullName;
        try
        {
            await using var server = await StartServerAsync(configText, "-js", "-sd", storeDir);
            await test(server);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>Opens a raw protocol connection to the shared server and reads its INFO.</summary>
    public Task<WireClient> ConnectAsync() => WireClient.ConnectAsync(Server);

    public async Task InitializeAsync()
    {
        _server = await ServerProcess.StartAsync(Kind, ConfigText);
    }

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }
}
