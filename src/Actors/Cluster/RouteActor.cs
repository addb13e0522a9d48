using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Cluster;

/// <summary>
/// Owns one route link's lifetime, as <see cref="ConnectionActor"/> does a client's: starts its
/// pumps (CONNECT and INFO first), runs the CONNECT timeout of an accepted route when the cluster
/// has authorization, the PING/PONG keepalive, and shuts the link down when it stops. Understands
/// <see cref="ConnectionActor.Protocol"/>'s messages, which the link's data path sends its owner.
/// Never sees a NATS message.
/// </summary>
internal sealed partial class RouteActor : ReceiveActor, IWithTimers
{
    private const string AuthTimerKey = "auth";
    private const string PingTimerKey = "ping";

    private readonly RouteContext _context;
    private readonly RouteLink _link;
    private readonly RouteConnection _connection;
    private string _closeReason = "Server Shutdown";

    public RouteActor(RouteContext context, Socket socket, RouteLink link, ulong id)
    {
        _context = context;
        _link = link;
        _connection = context.CreateConnection(new NetworkStream(socket, ownsSocket: false), socket, id, Self, link);

        Receive<ConnectionActor.Protocol.Connected>(_ => Timers.Cancel(AuthTimerKey));
        Receive<ConnectionActor.Protocol.AuthTimeout>(_ =>
        {
            if (!_link.ConnectReceived)
            {
                _connection.SendError(NatsErrors.AuthenticationTimeout);
                StopWith("Authentication Timeout");
            }
        });
        Receive<ConnectionActor.Protocol.PingTick>(_ =>
        {
            if (_connection.PingsOut + 1 > _context.Options.MaxPingsOut)
            {
                _connection.SendError(NatsErrors.StaleConnection);
                StopWith("Stale Connection");
                return;
            }

            _connection.SendPing();
        });
        Receive<ConnectionActor.Protocol.Close>(close => StopWith(close.Reason));
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    /// <summary>The link's data path (for the manager's bookkeeping).</summary>
    public static Props Props(RouteContext context, Socket socket, RouteLink link, ulong id) =>
        Akka.Actor.Props.Create(() => new RouteActor(context, socket, link, id));

    protected override void PreStart()
    {
        _context.Registry.Register(_connection);
        if (!_link.Solicited && _context.Options.Cluster.Username is not null)
        {
            Timers.StartSingleTimer(AuthTimerKey, ConnectionActor.Protocol.AuthTimeout.Instance, _context.Options.Cluster.AuthTimeout);
        }

        if (_context.Options.PingInterval > TimeSpan.Zero)
        {
            Timers.StartPeriodicTimer(PingTimerKey, ConnectionActor.Protocol.PingTick.Instance, _context.Options.PingInterval);
        }

        Log.Created(_context.Logger, _connection.RemoteIp, _connection.RemotePort, _connection.Id, _link.Solicited ? "solicited" : "accepted");
        _connection.Start();
    }

    protected override void PostStop()
    {
        _connection.Shutdown(_closeReason);
        Log.Closed(_context.Logger, _connection.RemoteIp, _connection.RemotePort, _connection.Id, _connection.CloseReason ?? _closeReason);
    }

    private void StopWith(string reason)
    {
        _closeReason = reason;
        Context.Stop(Self);
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "{Ip}:{Port} - rid:{Rid} - Route connection created ({How})")]
        public static partial void Created(ILogger logger, string ip, int port, ulong rid, string how);

        [LoggerMessage(Level = LogLevel.Information, Message = "{Ip}:{Port} - rid:{Rid} - Router connection closed: {Reason}")]
        public static partial void Closed(ILogger logger, string ip, int port, ulong rid, string reason);
    }
}
