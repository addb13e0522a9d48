using Akka.Configuration;
using Courier.Actors.Server;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// A TestKit whose actor system hosts a JetStream broker (<see cref="TestConfig.For"/>) on a store directory
/// of its own, removed after the test; a test's extra HOCON goes over the server's configuration.
/// </summary>
public abstract class JetStreamTestKit : Akka.TestKit.Xunit2.TestKit
{
    private static readonly string StoreRoot = Directory.CreateTempSubdirectory("courier-jstk-").FullName;

    protected JetStreamTestKit(string? extraConfig = null)
        : this(Path.Combine(StoreRoot, Guid.NewGuid().ToString("N")), extraConfig)
    {
    }

    private JetStreamTestKit(string storeDir, string? extraConfig)
        : base(ConfigurationFactory.ParseString(extraConfig ?? "").WithFallback(TestConfig.For(OptionsFor(storeDir))))
    {
        StoreDirectory = storeDir;
    }

    /// <summary>The broker's store directory.</summary>
    protected string StoreDirectory { get; }

    /// <summary>The options of a JetStream broker on <see cref="StoreDirectory"/>.</summary>
    protected ServerOptions Options => OptionsFor(StoreDirectory);

    /// <summary>
    /// Holds a thread of <c>courier.io-dispatcher</c> (a test gives it one thread: then file stream actors
    /// and the journal can process nothing) until the returned handle is disposed.
    /// </summary>
    protected async Task<IDisposable> HoldIoDispatcherAsync()
    {
        var release = new ManualResetEventSlim();
        var held = new TaskCompletionSource();
        Sys.Dispatchers.Lookup("courier.io-dispatcher").Schedule(() =>
        {
            held.SetResult();
            release.Wait(TimeSpan.FromSeconds(30));
        });
        await held.Task;
        return new Release(release);
    }

    protected override void AfterAll()
    {
        base.AfterAll();
        // xunit's TestKit runs AfterAll before it shuts the system down: stop the actors first, or a
        // store they close in PostStop (its index files) writes into the directory while it is deleted.
        Shutdown();
        if (Directory.Exists(StoreDirectory))
        {
            Directory.Delete(StoreDirectory, recursive: true);
        }
    }

    private static ServerOptions OptionsFor(string storeDir) => new() { Host = "127.0.0.1", JetStream = true, StoreDir = storeDir };

    private sealed class Release(ManualResetEventSlim release) : IDisposable
    {
        public void Dispose()
        {
            release.Set();
        }
    }
}
