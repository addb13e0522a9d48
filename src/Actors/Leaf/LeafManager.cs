using System.Net;
using System.Net.Sockets;
using Akka.Actor;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Leaf;

/// <summary>
/// One per node (<c>/user/leafnodes</c>): starts a <see cref="LeafActor"/> for each socket accepted on the
/// leaf node port and for each remote of <c>leafnodes.remotes</c> it dials; when a dialled link ends or a
/// dial fails, dials the remote again after <c>leafnodes.reconnect</c> (30 s after a loop was detected,
/// as nats-server), trying its URLs in turn, for as long as the node runs (nats-server's
/// connectToRemoteLeafNode / reConnectToRemoteLeafNode). A leaf that lost its hub keeps serving its
/// own clients meanwhile; the new link tells the hub all of its interest again.
/// </summary>
internal sealed partial class LeafManager : ReceiveActor, IWithTimers
{
    private static readonly TimeSpan DialTimeout = TimeSpan.FromSeconds(1); // nats-server's DEFAULT_ROUTE_DIAL, used for leafs too
    private static readonly TimeSpan LoopDelay = TimeSpan.FromSeconds(30); // nats-server's leafNodeReconnectDelayAfterLoopDetected

    private readonly LeafContext _context;
    private readonly ILogger _log;
    private readonly Dictionary<IActorRef, (LeafLink Link, int Remote)> _links = [];
    private readonly int[] _nextUrl;
    private bool _stopping;

    public LeafManager(LeafContext context)
    {
        _context = context;
        _log = context.Logger;
        _nextUrl = new int[context.Options.LeafNodes.Remotes.Count];
        Receive<Protocol.Start>(_ =>
        {
            for (var i = 0; i < _nextUrl.Length; i++)
            {
                Dial(i);
            }
        });
        Receive<Protocol.Accepted>(accepted => StartLink(accepted.Socket, new LeafLink(null, null), _context.Accounts.Global, -1));
        Receive<Protocol.Dial>(dial => Dial(dial.Remote));
        Receive<Protocol.Dialled>(OnDialled);
        Receive<Protocol.Stop>(_ => _stopping = true);
        Receive<Terminated>(OnLinkEnded);
    }

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(LeafContext context) => Akka.Actor.Props.Create(() => new LeafManager(context));

    protected override SupervisorStrategy SupervisorStrategy() => Akka.Actor.SupervisorStrategy.StoppingStrategy;

    private void StartLink(Socket socket, LeafLink link, Accounts.Account account, int remote)
    {
        var id = _context.Registry.NextClientId();
        var child = Context.ActorOf(LeafActor.Props(_context, socket, link, account, id), $"leaf-{id}");
        Context.Watch(child);
        _links[child] = (link, remote);
    }

    private void Dial(int remote)
    {
        var options = _context.Options.LeafNodes.Remotes[remote];
        var url = options.Urls[_nextUrl[remote] % options.Urls.Count];
        _nextUrl[remote]++;
        var self = Self;
        _ = DialAsync(url).ContinueWith(
            t => self.Tell(new Protocol.Dialled(remote, url, t.IsCompletedSuccessfully ? t.Result : null, t.Exception?.GetBaseException().Message)),
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
            if (_stopping)
            {
                socket.Dispose();
                return;
            }

            var remote = _context.Options.LeafNodes.Remotes[dialled.Remote];
            var accountName = string.IsNullOrEmpty(remote.Account) ? null : remote.Account;
            var account = accountName is null ? _context.Accounts.Global : _context.Accounts.Find(accountName);
            if (account is null)
            {
                Log.MissingAccount(_log, accountName!);
                socket.Dispose();
                Retry(dialled.Remote, _context.Options.LeafNodes.ReconnectInterval);
                return;
            }

            StartLink(socket, new LeafLink(remote, dialled.Url), account, dialled.Remote);
            return;
        }

        Log.ConnectError(_log, Redact(dialled.Url), dialled.Error ?? "connection failed");
        Retry(dialled.Remote, _context.Options.LeafNodes.ReconnectInterval);
    }

    private void OnLinkEnded(Terminated terminated)
    {
        if (!_links.Remove(terminated.ActorRef, out var entry) || entry.Remote < 0)
        {
            return;
        }

        Retry(entry.Remote, entry.Link.LoopDetected ? LoopDelay : _context.Options.LeafNodes.ReconnectInterval);
    }

    private void Retry(int remote, TimeSpan delay)
    {
        if (!_stopping)
        {
            Timers.StartSingleTimer($"dial-{remote}", new Protocol.Dial(remote), delay);
        }
    }

    private static string Redact(Uri url) => url.UserInfo.Length == 0 ? url.ToString() : url.ToString().Replace(url.UserInfo + "@", "[REDACTED]@", StringComparison.Ordinal);

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Error, Message = "Error trying to connect as leafnode to remote server \"{Url}\": {Error}")]
        public static partial void ConnectError(ILogger logger, string url, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "Unable to lookup account {Account} for solicited leafnode connection")]
        public static partial void MissingAccount(ILogger logger, string account);
    }

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>The node is up: dial the remotes.</summary>
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

        /// <summary>The leaf node listener accepted a socket.</summary>
        public sealed class Accepted(Socket socket)
        {
            public Socket Socket { get; } = socket;

            public override string ToString() => "Accepted";
        }

        /// <summary>Dial (again) remote number <see cref="Remote"/> of <c>leafnodes.remotes</c>.</summary>
        public sealed class Dial(int remote)
        {
            public int Remote { get; } = remote;

            public override string ToString() => $"Dial({Remote})";
        }

        /// <summary>A dial finished: a connected socket, or the error.</summary>
        public sealed class Dialled(int remote, Uri url, Socket? socket, string? error)
        {
            public int Remote { get; } = remote;

            public Uri Url { get; } = url;

            public Socket? Socket { get; } = socket;

            public string? Error { get; } = error;

            public override string ToString() => $"Dialled({Remote}, {(Socket is null ? Error : "connected")})";
        }
    }
}
