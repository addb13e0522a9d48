using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Gateway;

/// <summary>
/// One per node (<c>/user/gateways</c>): starts a <see cref="GatewayActor"/> for each socket accepted on the
/// gateway port and keeps one outbound link to each remote gateway: the configured ones
/// (<c>gateway.gateways</c>, dialled for as long as the node runs) and the implicit ones learnt from an
/// inbound link's INFO or from gossip (given up after <c>connect_retries</c> failed dials, as nats-server's
/// solicitGateway). A lost or failed link is dialled again after a second, its URLs tried in turn.
/// </summary>
internal sealed partial class GatewayManager : ReceiveActor, IWithTimers
{
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1); // nats-server's DEFAULT_ROUTE_DIAL
    private static readonly TimeSpan ReconnectDelay = TimeSpan.FromSeconds(1); // nats-server's gateway reconnect delay

    private readonly GatewayContext _context;
    private readonly ILogger _log;
    private readonly List<Remote> _remotes = [];
    private readonly Dictionary<IActorRef, Remote?> _links = [];
    private bool _stopping;

    public GatewayManager(GatewayContext context)
    {
        _context = context;
        _log = context.Logger;
        foreach (var remote in context.Options.Gateway.Remotes)
        {
            if (remote.Name != context.Gateways.Name)
            {
                _remotes.Add(new Remote(remote.Name, [.. remote.Urls], remote));
            }
        }

        Receive<Protocol.Start>(_ =>
        {
            foreach (var remote in _remotes)
            {
                Dial(remote);
            }
        });
        Receive<Protocol.Accepted>(accepted => StartLink(accepted.Socket, new GatewayLink(null, null, null), null));
        Receive<Protocol.Implicit>(OnImplicit);
        Receive<Protocol.Dial>(dial => Dial(_remotes[dial.Index]));
        Receive<Protocol.Dialled>(OnDialled);
        Receive<Protocol.Stop>(_ => _stopping = true);
        Receive<Terminated>(OnLinkEnded);
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(GatewayContext context) => Akka.Actor.Props.Create(() => new GatewayManager(context));

    protected override SupervisorStrategy SupervisorStrategy() => Akka.Actor.SupervisorStrategy.StoppingStrategy;

    private void StartLink(Socket socket, GatewayLink link, Remote? remote)
    {
        var id = _context.Registry.NextClientId();
        var child = Context.ActorOf(GatewayActor.Props(_context, socket, link, id), $"gateway-{id}");
        Context.Watch(child);
        _links[child] = remote;
    }

    // A gateway named by an inbound link's INFO or by gossip: dialled unless known (nats-server's processImplicitGateway).
    private void OnImplicit(Protocol.Implicit gossip)
    {
        if (_stopping || gossip.Name == _context.Gateways.Name)
        {
            return;
        }

        foreach (var remote in _remotes)
        {
            if (remote.Name == gossip.Name)
            {
                return;
            }
        }

        var urls = new List<Uri>();
        foreach (var text in gossip.Urls)
        {
            if (Uri.TryCreate($"nats://{text}", UriKind.Absolute, out var url))
            {
                urls.Add(url);
            }
        }

        if (urls.Count == 0)
        {
            return;
        }

        var added = new Remote(gossip.Name, urls, null) { Index = _remotes.Count };
        _remotes.Add(added);
        Dial(added);
    }

    private void Dial(Remote remote)
    {
        if (_stopping || _context.Gateways.HasOutbound(remote.Name))
        {
            return;
        }

        remote.Index = _remotes.IndexOf(remote);
        var url = remote.Urls[remote.NextUrl % remote.Urls.Count];
        remote.NextUrl++;
        var self = Self;
        _ = DialAsync(url).ContinueWith(
            t => self.Tell(new Protocol.Dialled(remote.Index, url, t.IsCompletedSuccessfully ? t.Result : null, t.Exception?.GetBaseException().Message)),
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
        var remote = _remotes[dialled.Index];
        if (dialled.Socket is { } socket)
        {
            if (_stopping)
            {
                socket.Dispose();
                return;
            }

            remote.Failures = 0;
            StartLink(socket, new GatewayLink(remote.Name, dialled.Url, remote.Configured), remote);
            return;
        }

        Log.ConnectError(_log, remote.Name, Redact(dialled.Url), dialled.Error ?? "connection failed");
        remote.Failures++;
        Retry(remote);
    }

    private void OnLinkEnded(Terminated terminated)
    {
        if (_links.Remove(terminated.ActorRef, out var remote) && remote is not null)
        {
            Retry(remote);
        }
    }

    private void Retry(Remote remote)
    {
        // An implicit gateway is given up after connect_retries failed dials (0: at the first), as nats-server.
        if (_stopping || (remote.Configured is null && remote.Failures > _context.Options.Gateway.ConnectRetries))
        {
            return;
        }

        Timers.StartSingleTimer($"dial-{remote.Index}", new Protocol.Dial(remote.Index), ReconnectDelay);
    }

    private static string Redact(Uri url) => url.UserInfo.Length == 0 ? url.ToString() : url.ToString().Replace(url.UserInfo + "@", "[REDACTED]@", StringComparison.Ordinal);

    /// <summary>A remote gateway this node keeps an outbound link to.</summary>
    private sealed class Remote(string name, List<Uri> urls, GatewayRemote? configured)
    {
        public string Name { get; } = name;

        public List<Uri> Urls { get; } = urls;

        public GatewayRemote? Configured { get; } = configured;

        public int Index { get; set; }

        public int NextUrl { get; set; }

        public int Failures { get; set; }
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "Error connecting to gateway \"{Name}\" ({Url}): {Error}")]
        public static partial void ConnectError(ILogger logger, string name, string url, string error);
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>The node is up: dial the configured gateways.</summary>
        public sealed class Start
        {
            public static readonly Start Instance = new();

            private Start()
            {
            }

            public override string ToString() => "Start";
        }

        /// <summary>The node is shutting down: no more dials.</summary>
        public sealed class Stop
        {
            public static readonly Stop Instance = new();

            private Stop()
            {
            }

            public override string ToString() => "Stop";
        }

        /// <summary>The gateway listener accepted a socket.</summary>
        public sealed class Accepted(Socket socket)
        {
            public Socket Socket { get; } = socket;

            public override string ToString() => "Accepted";
        }

        /// <summary>A gateway learnt from an inbound link's INFO or from gossip, with its URLs (<c>host:port</c>).</summary>
        public sealed class Implicit(string name, string[] urls)
        {
            public string Name { get; } = name;

            public string[] Urls { get; } = urls;

            public override string ToString() => $"Implicit({Name})";
        }

        /// <summary>Dial (again) remote number <see cref="Index"/>.</summary>
        public sealed class Dial(int index)
        {
            public int Index { get; } = index;

            public override string ToString() => $"Dial({Index})";
        }

        /// <summary>A dial finished: a connected socket, or the error.</summary>
        public sealed class Dialled(int index, Uri url, Socket? socket, string? error)
        {
            public int Index { get; } = index;

            public Uri Url { get; } = url;

            public Socket? Socket { get; } = socket;

            public string? Error { get; } = error;

            public override string ToString() => $"Dialled({Index}, {(Socket is null ? Error : "connected")})";
        }
    }
}
