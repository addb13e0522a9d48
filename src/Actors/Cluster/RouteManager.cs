using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Courier.Protocols.Nats;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Cluster;

/// <summary>
/// One per node (<c>/user/routes</c>): starts a <see cref="RouteActor"/> for each accepted route
/// socket and each route it dials, dials the routes of <c>cluster.routes</c> (explicit: retried
/// forever) and the servers peers tell it about (implicit: <c>connect_retries</c> retries), and when
/// a dialled link ends, dials again unless the peer is reachable through another link or was this
/// node itself (nats-server's connectToRoute and reConnectToRoute).
/// </summary>
internal sealed partial class RouteManager : ReceiveActor, IWithTimers
{
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1); // nats-server's DEFAULT_ROUTE_DIAL
    private static readonly TimeSpan RetryDelay = TimeSpan.FromSeconds(1); // nats-server's routeConnectDelay / DEFAULT_ROUTE_RECONNECT

    private readonly RouteContext _context;
    private readonly ILogger _log;
    private readonly Dictionary<IActorRef, RouteLink> _links = [];
    private readonly HashSet<string> _dialing = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, Uri> _members = new(StringComparer.Ordinal); // Akka.Cluster members' route URLs by server id
    private List<Uri> _explicit = [];
    private bool _started;

    public RouteManager(RouteContext context)
    {
        _context = context;
        _log = context.Logger;
        Receive<Protocol.StartRouting>(start =>
        {
            _started = true;
            _explicit = [.. start.Routes];
            foreach (var url in _explicit)
            {
                Dial(url, isExplicit: true, attempt: 0);
            }
        });
        Receive<Protocol.Accepted>(accepted => StartLink(accepted.Socket, new RouteLink(null, isExplicit: false)));
        Receive<Protocol.Dial>(dial => Dial(dial.Url, dial.Explicit, dial.Attempt));
        Receive<Protocol.Dialled>(OnDialled);
        Receive<Protocol.ImplicitRoute>(implicitRoute => OnImplicitRoute(implicitRoute.Info));
        Receive<Protocol.MemberUp>(up =>
        {
            // A Courier member: keep a route to it for as long as it is a member.
            _members[up.ServerId] = up.Url;
            if (_started && !_context.Routes.IsConnected(up.ServerId))
            {
                Dial(up.Url, isExplicit: false, attempt: 0);
            }
        });
        Receive<Protocol.MemberRemoved>(removed =>
        {
            _members.Remove(removed.ServerId);
            foreach (var route in _context.Routes.Routes)
            {
                if (route.Link.RemoteId == removed.ServerId)
                {
                    route.RequestClose("Cluster Member Removed");
                }
            }
        });
        Receive<Terminated>(OnLinkEnded);
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(RouteContext context) => Akka.Actor.Props.Create(() => new RouteManager(context));

    protected override SupervisorStrategy SupervisorStrategy() => Akka.Actor.SupervisorStrategy.StoppingStrategy;

    private void StartLink(Socket socket, RouteLink link)
    {
        var id = _context.Registry.NextClientId();
        var child = Context.ActorOf(RouteActor.Props(_context, socket, link, id), $"route-{id}");
        Context.Watch(child);
        _links[child] = link;
    }

    private void Dial(Uri url, bool isExplicit, int attempt)
    {
        // A URL of cluster.routes stays explicit (re-dialled forever) whatever made this dial: a member's
        // route that dropped is dialled by its member URL, and when that link fails and the member is
        // removed meanwhile (a partition), an implicit dial would be given up and the route lost for good.
        isExplicit |= IsConfigured(url);
        var key = Key(url);
        if (attempt == 0 && !_dialing.Add(key))
        {
            return; // already being dialled
        }

        var self = Self;
        _ = DialAsync(url).ContinueWith(
            t => self.Tell(new Protocol.Dialled(url, isExplicit, attempt + 1, t.IsCompletedSuccessfully ? t.Result : null, t.Exception?.GetBaseException().Message)),
            TaskScheduler.Default);
    }

    private static async Task<Socket> DialAsync(Uri url)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using var timeout = new CancellationTokenSource(DialTimeout);
            await socket.ConnectAsync(new DnsEndPoint(url.Host.Trim('[', ']'), url.Port), timeout.Token).ConfigureAwait(false);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private void OnDialled(Protocol.Dialled dialled)
    {
        if (dialled.Socket is { } socket)
        {
            _dialing.Remove(Key(dialled.Url));
            StartLink(socket, new RouteLink(dialled.Url, dialled.Explicit));
            return;
        }

        if (dialled.Attempt == 1)
        {
            Log.ConnectError(_log, dialled.Attempt, dialled.Error ?? "connection failed");
        }
        else
        {
            Log.ConnectErrorDebug(_log, dialled.Attempt, dialled.Error ?? "connection failed");
        }

        var retries = _context.Options.Cluster.ConnectRetries;
        if (!dialled.Explicit && !IsMember(dialled.Url) && (retries <= 0 || dialled.Attempt > retries))
        {
            _dialing.Remove(Key(dialled.Url));
            return;
        }

        Timers.StartSingleTimer(Key(dialled.Url), new Protocol.Dial(dialled.Url, dialled.Explicit, dialled.Attempt), RetryDelay);
    }

    private void OnLinkEnded(Terminated terminated)
    {
        if (!_links.Remove(terminated.ActorRef, out var link) || !_started)
        {
            return;
        }

        if (link.IsSelf)
        {
            return;
        }

        if (link.RemoteId is { } member && _members.TryGetValue(member, out var memberUrl) && !_context.Routes.IsConnected(member))
        {
            // A member's route dropped while it is still a member: dial it again, whichever side dialled before.
            if (_dialing.Add(Key(memberUrl)))
            {
                Timers.StartSingleTimer(Key(memberUrl), new Protocol.Dial(memberUrl, false, 1), RetryDelay + TimeSpan.FromMilliseconds(Random.Shared.Next(100)));
            }

            return;
        }

        if (link.Url is not { } url || !(link.Solicited || link.Retry))
        {
            return;
        }

        if (link.RemoteId is { } remoteId && _context.Routes.IsConnected(remoteId))
        {
            Log.AlreadyConnected(_log, remoteId);
            return;
        }

        if (link.Explicit || link.Retry)
        {
            // A random delay keeps two nodes that both dropped a duplicate from meeting again in lockstep.
            var delay = (link.Explicit ? RetryDelay : TimeSpan.Zero) + TimeSpan.FromMilliseconds(Random.Shared.Next(100));
            if (_dialing.Add(Key(url)))
            {
                Timers.StartSingleTimer(Key(url), new Protocol.Dial(url, link.Explicit, 1), delay);
            }
        }
    }

    private void OnImplicitRoute(RouteInfo info)
    {
        if (info.ServerId == _context.ServerId || _context.Routes.IsConnected(info.ServerId) || string.IsNullOrEmpty(info.Ip))
        {
            return;
        }

        var hostPort = $"{info.Host}:{info.Port}";
        foreach (var configured in _explicit)
        {
            if (string.Equals($"{configured.Host}:{configured.Port}", hostPort, StringComparison.OrdinalIgnoreCase))
            {
                return; // dialled as an explicit route already
            }
        }

        // Dialled with the cluster's own credentials when it has some (RouteConnection.Start).
        if (Uri.TryCreate(info.Ip, UriKind.Absolute, out var url))
        {
            Dial(url, isExplicit: false, attempt: 0);
        }
    }

    private bool IsConfigured(Uri url)
    {
        foreach (var configured in _explicit)
        {
            if (Key(configured) == Key(url))
            {
                return true;
            }
        }

        return false;
    }

    private bool IsMember(Uri url)
    {
        foreach (var memberUrl in _members.Values)
        {
            if (Key(memberUrl) == Key(url))
            {
                return true;
            }
        }

        return false;
    }

    private static string Key(Uri url) => $"{url.Host}:{url.Port}";

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "Error trying to connect to route (attempt {Attempt}): {Error}")]
        public static partial void ConnectError(ILogger logger, int attempt, string error);

        [LoggerMessage(Level = LogLevel.Debug, Message = "Error trying to connect to route (attempt {Attempt}): {Error}")]
        public static partial void ConnectErrorDebug(ILogger logger, int attempt, string error);

        [LoggerMessage(Level = LogLevel.Debug, Message = "Not attempting reconnect for solicited route, already connected to \"{RemoteId}\"")]
        public static partial void AlreadyConnected(ILogger logger, string remoteId);
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>The route listener is bound: dial the configured routes.</summary>
        public sealed class StartRouting(IReadOnlyList<Uri> routes)
        {
            public IReadOnlyList<Uri> Routes { get; } = routes;

            public override string ToString() => $"StartRouting({Routes.Count} routes)";
        }

        /// <summary>The route listener accepted a socket.</summary>
        public sealed class Accepted(Socket socket)
        {
            public Socket Socket { get; } = socket;

            public override string ToString() => "Accepted";
        }

        /// <summary>Dial (again) a route URL.</summary>
        public sealed class Dial(Uri url, bool isExplicit, int attempt)
        {
            public Uri Url { get; } = url;

            public bool Explicit { get; } = isExplicit;

            /// <summary>Failed attempts so far.</summary>
            public int Attempt { get; } = attempt;

            public override string ToString() => $"Dial({Url}, attempt {Attempt})";
        }

        /// <summary>A dial finished: a connected socket, or the error.</summary>
        public sealed class Dialled(Uri url, bool isExplicit, int attempt, Socket? socket, string? error)
        {
            public Uri Url { get; } = url;

            public bool Explicit { get; } = isExplicit;

            public int Attempt { get; } = attempt;

            public Socket? Socket { get; } = socket;

            public string? Error { get; } = error;

            public override string ToString() => $"Dialled({Url}, {(Socket is null ? Error : "connected")})";
        }

        /// <summary>An Akka.Cluster member came up: its server id and route URL (from its roles).</summary>
        public sealed class MemberUp(string serverId, Uri url)
        {
            public string ServerId { get; } = serverId;

            public Uri Url { get; } = url;

            public override string ToString() => $"MemberUp({ServerId}, {Url})";
        }

        /// <summary>An Akka.Cluster member was removed (left, or downed): its route is closed.</summary>
        public sealed class MemberRemoved(string serverId)
        {
            public string ServerId { get; } = serverId;

            public override string ToString() => $"MemberRemoved({ServerId})";
        }

        /// <summary>A peer told of another server (gossip).</summary>
        public sealed class ImplicitRoute(RouteInfo info)
        {
            public RouteInfo Info { get; } = info;

            public override string ToString() => $"ImplicitRoute({Info.ServerId})";
        }
    }
}
