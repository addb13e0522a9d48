using System.Net.Sockets;
using Courier.Actors.Runtime;
using Courier.Actors.Server;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// Parent of every <see cref="ConnectionActor"/> on the node. Enforces <c>max_connections</c>,
/// stops (never restarts) a failed connection actor so a failure closes that client only, and
/// sweeps for writes stuck past <c>write_deadline</c>.
/// </summary>
internal sealed class ConnectionSupervisor : ReceiveActor, IWithTimers
{
    /// <summary>How often stuck writes are looked for.</summary>
    private static readonly TimeSpan SweepInterval = TimeSpan.FromSeconds(1);

    private readonly Broker _broker;
    private int _open;

    public ConnectionSupervisor(Broker broker)
    {
        _broker = broker;
        Receive<Protocol.Accept>(OnAccept);
        Receive<Terminated>(_ => _open--);
        Receive<Protocol.Sweep>(_ => Sweep());
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(Broker broker) => Runtime.Props.Create(() => new ConnectionSupervisor(broker));

    protected override void PreStart() => Timers.StartPeriodicTimer("sweep", Protocol.Sweep.Instance, SweepInterval);

    /// <summary>A failure in one connection closes that connection only.</summary>
    protected override SupervisorStrategy SupervisorStrategy() => Runtime.SupervisorStrategy.StoppingStrategy;

    private void OnAccept(Protocol.Accept accept)
    {
        var id = _broker.NextClientId();
        if (_open >= _broker.Options.MaxConnections)
        {
            _ = RejectAsync(accept.Socket, id);
            return;
        }

        _open++;
        var stream = new NetworkStream(accept.Socket, ownsSocket: false);
        var child = Context.ActorOf(ConnectionActor.Props(_broker, accept.Socket, stream, id), $"client-{id}");
        Context.Watch(child);
    }

    private async Task RejectAsync(Socket socket, ulong id)
    {
        // nats-server sends INFO, then the error, then closes.
        try
        {
            var info = ProtocolWriter.Info(_broker.CreateInfo(id, null));
            var error = ProtocolWriter.Error(NatsErrors.MaxConnectionsExceeded);
            await socket.SendAsync(info, SocketFlags.None).ConfigureAwait(false);
            await socket.SendAsync(error, SocketFlags.None).ConfigureAwait(false);
            socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
        }
        finally
        {
            socket.Dispose();
        }
    }

    private void Sweep()
    {
        var deadline = _broker.Options.WriteDeadline;
        foreach (var client in _broker.Clients)
        {
            if (client.Outbound.CurrentWriteDuration > deadline)
            {
                _broker.Stats.CountSlowConsumer();
                client.RequestClose("Slow Consumer (Write Deadline)");
            }
        }
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>A client socket was accepted by a listener.</summary>
        public sealed class Accept
        {
            public Accept(Socket socket)
            {
                ArgumentNullException.ThrowIfNull(socket);
                Socket = socket;
            }

            public Socket Socket { get; }

            public override string ToString() => $"Accept({Socket.RemoteEndPoint})";
        }

        /// <summary>Look for writes stuck past the deadline.</summary>
        public sealed class Sweep
        {
            public static readonly Sweep Instance = new();

            private Sweep()
            {
            }
        }
    }
}
