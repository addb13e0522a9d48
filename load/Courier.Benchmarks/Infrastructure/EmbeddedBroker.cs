using System.Buffers;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Testing;

namespace Courier.Benchmarks.Infrastructure;

/// <summary>
/// A real <see cref="Broker"/> (actor system, subject routers, subject space) with socketless
/// client connections: commands go in through <see cref="ReadBatches.ProcessBatchAsync"/>, and
/// each subscriber's write pump drains into <see cref="Stream.Null"/>.
/// </summary>
internal sealed class EmbeddedBroker : IAsyncDisposable
{
    /// <summary>
    /// Bytes; far above what a benchmark queues between two drains, so no client ever becomes a
    /// slow consumer (nats-server's default is 64 MB).
    /// </summary>
    public const long MaxPending = 1L << 30;

    // CONNECT as client libraries send it: no +OK per command, no subject check per PUB.
    private const string ConnectCommand = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true}\r\n";

    private readonly List<(ClientConnection Client, Task Pump)> _clients = [];

    public EmbeddedBroker()
    {
        // Benchmark setup (not an actor thread): wait until the router shards exist.
        Broker = new Broker(new ServerOptions { Host = "127.0.0.1", MaxPending = MaxPending });
        Broker.StartAsync().GetAwaiter().GetResult();
    }

    public Broker Broker { get; }

    /// <summary>
    /// A connection with no socket (a <see cref="MemoryStream"/> that nothing reads), owned by no
    /// actor, after its CONNECT; its outbound is drained by its write pump into <see cref="Stream.Null"/>.
    /// </summary>
    public ClientConnection Connect()
    {
        var client = new ClientConnection(Broker.NatsClients, new MemoryStream(), socket: null, Broker.NextClientId(), ActorRefs.Nobody);
        Run(client, ConnectCommand);
        _clients.Add((client, client.Outbound.RunWritePumpAsync(Stream.Null)));
        return client;
    }

    /// <summary>
    /// Sends <paramref name="commands"/> through the client's read path and waits until it is done,
    /// SUB/UNSUB included (the routers have published them).
    /// </summary>
    public static void Run(ClientConnection client, string commands)
    {
        var bytes = Frames.Ascii(commands);
        var consumed = client.ProcessBatchAsync(new ReadOnlySequence<byte>(bytes)).AsTask().GetAwaiter().GetResult();
        if (consumed != bytes.Length || client.IsClosed)
        {
            throw new InvalidOperationException($"the connection did not take '{commands.Trim()}' ({consumed} of {bytes.Length} bytes)");
        }
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var (client, pump) in _clients)
        {
            client.Outbound.Complete();
            await pump.ConfigureAwait(false);
        }

        await Broker.DisposeAsync().ConfigureAwait(false);
    }
}
