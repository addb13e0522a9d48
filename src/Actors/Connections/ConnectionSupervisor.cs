using System.Net.Sockets;
using Akka.Actor;
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

    private readonly ServerOptions _options;
    private readonly ClientRegistry _registry;
    private readonly ServerStats _stats;
    private readonly IConnectionFactory _factory;
    private int _open;

    public ConnectionSupervisor(ServerOptions options, ClientRegistry registry, ServerStats stats, IConnectionFactory factory)
    {
        _options = options;
        _registry = registry;
        _stats = stats;
        _factory = factory;
        Receive<Protocol.Accept>(OnAccept);
        Receive<Protocol.AcceptMqtt>(OnAcceptMqtt);
        Receive<Terminated>(_ => _open--);
        Receive<Protocol.Sweep>(_ => Sweep());
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(ServerOptions options, ClientRegistry registry, ServerStats stats, IConnectionFactory factory) =>
        Akka.Actor.Props.Create(() => new ConnectionSupervisor(options, registry, stats, factory));

    protected override void PreStart() => Timers.StartPeriodicTimer("sweep", Protocol.Sweep.Instance, SweepInterval);

    /// <summary>A failure in one connection closes that connection only.</summary>
    protected override SupervisorStrategy SupervisorStrategy() => Akka.Actor.SupervisorStrategy.StoppingStrategy;

    private void OnAccept(Protocol.Accept accept)
    {
        var id = _registry.NextClientId();
        if (_open >= _options.MaxConnections)
        {
            _ = RejectAsync(accept.Socket, accept.Stream, id);
            return;
        }

        _open++;
        var stream = accept.Stream ?? new NetworkStream(accept.Socket, ownsSocket: false);
        var child = Context.ActorOf(ConnectionActor.Props(_factory, _registry, _options, accept.Socket, stream, id), $"client-{id}");
        Context.Watch(child);
    }

    private void OnAcceptMqtt(Protocol.AcceptMqtt accept)
    {
        var id = _registry.NextClientId();
        if (_open >= _options.MaxConnections)
        {
            // MQTT has no error before CONNECT: the socket is closed, as nats-server does.
            accept.Stream?.Dispose();
            accept.Socket.Dispose();
            return;
        }

        _open++;
        var stream = accept.Stream ?? new NetworkStream(accept.Socket, ownsSocket: false);
        var child = Context.ActorOf(Mqtt.MqttConnectionActor.Props(_factory, _registry, _options, accept.Socket, stream, id), $"mqtt-{id}");
        Context.Watch(child);
    }

    private async Task RejectAsync(Socket socket, Stream? stream, ulong id)
    {
        // nats-server sends INFO, then the error, then closes (over WebSocket: framed by the stream).
        try
        {
            var info = _factory.RejectionInfo(id);
            var error = ProtocolWriter.Error(NatsErrors.MaxConnectionsExceeded);
            if (stream is not null)
            {
                await stream.WriteAsync(info).ConfigureAwait(false);
                await stream.WriteAsync(error).ConfigureAwait(false);
                await stream.DisposeAsync().ConfigureAwait(false);
            }
            else
            {
                await socket.SendAsync(info, SocketFlags.None).ConfigureAwait(false);
                await socket.SendAsync(error, SocketFlags.None).ConfigureAwait(false);
            }

            socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception e) when (e is SocketException or IOException or ObjectDisposedException)
        {
        }
        finally
        {
            socket.Dispose();
        }
    }

    private void Sweep()
    {
        var deadline = _options.WriteDeadline;
        foreach (var client in _registry.Clients)
        {
            if (client.Outbound.CurrentWriteDuration > deadline)
            {
                _stats.CountSlowConsumer();
                client.RequestClose("Slow Consumer (Write Deadline)");
            }
        }
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>A socket a listener accepted, with the stream it built over it (WebSocket) if any.</summary>
        public abstract class Accepted
        {
            private protected Accepted(Socket socket, Stream? stream)
            {
                ArgumentNullException.ThrowIfNull(socket);
                Socket = socket;
                Stream = stream;
            }

            public Socket Socket { get; }

            /// <summary>The connection's stream when the listener already built one (WebSocket); else the socket's own.</summary>
            public Stream? Stream { get; }

            public override string ToString() => $"{GetType().Name}({Socket.RemoteEndPoint})";
        }

        /// <summary>A client socket was accepted by a listener.</summary>
        public sealed class Accept(Socket socket, Stream? stream = null) : Accepted(socket, stream);

        /// <summary>An MQTT client socket was accepted by the MQTT listener (or the WebSocket listener, on <c>/mqtt</c>).</summary>
        public sealed class AcceptMqtt(Socket socket, Stream? stream = null) : Accepted(socket, stream);

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
