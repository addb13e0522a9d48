using System.Globalization;
using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Cluster;
using Courier.Actors.Hosting;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server;

/// <summary>
/// This node's view of its cluster: the route listener and the route INFO, the client URLs INFO
/// advertises (<c>connect_urls</c>, sent again to clients when routes come and go), Akka.Cluster
/// membership, and the route manager and membership actors once started.
/// </summary>
internal sealed class ClusterView(ServerOptions options, string serverId, string serverName, RouteTable? routes, ClientInfo info, ClientRegistry registry)
{
    private readonly ServerOptions _options = options;
    private readonly string _serverId = serverId;
    private readonly string _serverName = serverName;
    private readonly RouteTable? _routes = routes;
    private readonly ClientInfo _info = info;
    private readonly ClientRegistry _registry = registry;
    private bool _lameDuck;

    /// <summary>This node's Akka.Cluster address (told to peers in the route INFO); null without a cluster.</summary>
    public string? AkkaAddress { get; private set; }

    /// <summary>The route manager actor; Nobody without a cluster.</summary>
    public IActorRef RouteManager { get; private set; } = ActorRefs.Nobody;

    /// <summary>The membership actor; Nobody without Akka.Cluster.</summary>
    public IActorRef ClusterNode { get; private set; } = ActorRefs.Nobody;

    /// <summary>The actors are up: the route manager, and with Akka.Cluster the membership actor and this node's address.</summary>
    public void Started(IActorRef routeManager, IActorRef clusterNode, string? akkaAddress)
    {
        RouteManager = routeManager;
        ClusterNode = clusterNode;
        AkkaAddress = akkaAddress;
        _routeInfoLine = null;
    }

    /// <summary>
    /// Lame duck mode: tells the routes (a route INFO with <c>"ldm":true</c>: peers stop advertising
    /// this node's client URLs, nats-server's sendLDMToRoutes) and leaves this node's URLs out of INFO.
    /// </summary>
    public void EnterLameDuckMode()
    {
        _lameDuck = true;
        if (_routes is null)
        {
            return;
        }

        // INFO {json}\r\n, with "ldm":true
        var line = RouteInfoLine(lameDuck: true);
        foreach (var route in _routes.Routes)
        {
            route.Outbound.Write(line);
            route.Outbound.Signal();
        }

        UpdateConnectUrls(notify: false); // without this node's URLs; the broker's INFO to its clients tells them
    }

    /// <summary>Whether this node is an Up member of the Akka cluster (for /healthz and /varz).</summary>
    public bool IsClusterMember => Volatile.Read(ref _member);

    private bool _member;
    private bool _everMember;

    /// <summary>
    /// Whether this node should be an Akka.Cluster member: it was one, or a Courier peer is routed
    /// (a lone node, or one routed to nats-server only, is healthy without membership).
    /// </summary>
    public bool ClusterPeersExpected
    {
        get
        {
            if (Volatile.Read(ref _everMember))
            {
                return true;
            }

            foreach (var route in _routes?.Routes ?? [])
            {
                if (route.Link.RemoteInfo?.CourierAkka is not null)
                {
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>Membership of this node changed (Up, or removed).</summary>
    internal void OnMembershipChanged(bool member)
    {
        Volatile.Write(ref _member, member);
        if (member)
        {
            Volatile.Write(ref _everMember, true);
        }
    }

    /// <summary>The public host peers reach this node's route listener and Akka.Remote on.</summary>
    internal string ClusterPublicHost()
    {
        var cluster = _options.Cluster;
        if (cluster.Advertise is { } advertise)
        {
            var colon = advertise.LastIndexOf(':');
            return colon < 0 ? advertise : advertise[..colon];
        }

        if (cluster.Host is not ("0.0.0.0" or "::" or "[::]" or ""))
        {
            return cluster.Host;
        }

        var urls = OwnClientUrls();
        var first = urls[0];
        return first[..first.LastIndexOf(':')];
    }

    // Roles: the server id, its name and the route URL members dial (Cluster.ClusterNode).
    internal ClusterMember? MemberConfig()
    {
        if (_routes is null)
        {
            return null;
        }

        var host = ClusterPublicHost();
        var bind = _options.Cluster.Host is "" or "::" or "[::]" ? "0.0.0.0" : _options.Cluster.Host;
        var routePort = _routePort;
        if (_options.Cluster.Advertise is { } advertise && advertise.LastIndexOf(':') is var colon and > 0
            && int.TryParse(advertise.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var advertisedPort))
        {
            routePort = advertisedPort; // members dial the advertised route URL, as peers told of it in INFO do
        }

        // akka_advertise: peers reach Akka.Remote through another address (a proxy); by default the cluster host.
        var akkaHost = host;
        var akkaPublicPort = 0;
        if (_options.Cluster.AkkaAdvertise is { } akkaAdvertise && akkaAdvertise.LastIndexOf(':') is var akkaColon and > 0
            && int.TryParse(akkaAdvertise.AsSpan(akkaColon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var akkaPort))
        {
            akkaHost = akkaAdvertise[..akkaColon];
            akkaPublicPort = akkaPort;
        }

        return new ClusterMember(bind, akkaHost,
        [
            Cluster.ClusterNode.ServerRole + _serverId,
            Cluster.ClusterNode.NameRole + _serverName,
            Cluster.ClusterNode.RouteRole + $"nats-route://{host}:{routePort}",
            .. _options.Tags.Select(tag => Cluster.ClusterNode.TagRole + tag),
        ],
            _options.Cluster.AkkaPort,
            akkaPublicPort);
    }


    /// <summary>The route listener is bound on <paramref name="port"/> (before the broker starts: the Akka roles name it).</summary>
    public void SetRoutePort(int port)
    {
        _routePort = port;
        _routeInfoLine = null;
    }


    /// <summary>The route listener's port (0 before routing starts).</summary>
    public int RoutePort => _routePort;

    private int _routePort;
    private byte[]? _routeInfoLine;

    /// <summary>
    /// <c>INFO {json}\r\n</c> for a route, as nats-server's startRouteAcceptLoop fills it: id, name,
    /// the route listener's (or advertised) host and port, cluster name, headers, and unless
    /// <c>no_advertise</c> the client URLs. Cached until the cluster name or the URLs change.
    /// </summary>
    internal byte[] RouteInfoLine() => RouteInfoLine(lameDuck: false);

    /// <summary>
    /// As <see cref="RouteInfoLine()"/>; with <paramref name="lameDuck"/> the one INFO a node in lame duck
    /// mode sends its routes, with <c>"ldm":true</c> (nats-server's sendLDMToRoutes), never cached.
    /// </summary>
    internal byte[] RouteInfoLine(bool lameDuck)
    {
        if (!lameDuck && _routeInfoLine is { } line)
        {
            return line;
        }

        var cluster = _options.Cluster;
        var info = new RouteInfo
        {
            ServerId = _serverId,
            ServerName = _serverName,
            Version = _options.NatsServerVersion,
            Go = "courier " + Broker.CourierVersion,
            Host = cluster.Host,
            Port = _routePort,
            Headers = true,
            AuthRequired = cluster.Username is not null,
            TlsRequired = cluster.Tls is not null, // nats-server: both true with a cluster tls block
            TlsVerify = cluster.Tls is not null,
            MaxPayload = _options.MaxPayload,
            Proto = 2, // RouteProtoV2: accounts on RS+/RS-/RMSG
            Cluster = _routes!.ClusterName,
            Dynamic = _routes.Dynamic,
            Lnoc = true,
            ConnectUrls = cluster.NoAdvertise ? null : OwnClientUrls(),
            CourierAkka = AkkaAddress,
        };
        if (cluster.Advertise is { } advertise)
        {
            var colon = advertise.LastIndexOf(':');
            info.Host = colon < 0 ? advertise : advertise[..colon];
            info.Port = colon < 0 ? _routePort : int.Parse(advertise.AsSpan(colon + 1), global::System.Globalization.CultureInfo.InvariantCulture);
            info.Ip = $"nats-route://{info.Host}:{info.Port}/";
        }

        if (lameDuck)
        {
            info.LameDuckMode = true;
            return ProtocolWriter.Info(info);
        }

        return _routeInfoLine = ProtocolWriter.Info(info);
    }

    /// <summary>
    /// This node's client URLs (host:port) as nats-server's getClientConnectURLs: the listen host, or
    /// when it listens on every address, each non-loopback IPv4 address (loopback if there is no other).
    /// </summary>
    internal IReadOnlyList<string> OwnClientUrls()
    {
        var host = _options.Host;
        var port = _info.Port;
        if (host is not ("0.0.0.0" or "::" or "[::]"))
        {
            return [$"{host}:{port}"];
        }

        var urls = new List<string>();
        try
        {
            foreach (var nic in global::System.Net.NetworkInformation.NetworkInterface.GetAllNetworkInterfaces())
            {
                foreach (var address in nic.GetIPProperties().UnicastAddresses)
                {
                    if (address.Address.AddressFamily == AddressFamily.InterNetwork && !global::System.Net.IPAddress.IsLoopback(address.Address))
                    {
                        urls.Add($"{address.Address}:{port}");
                    }
                }
            }
        }
        catch (global::System.Net.NetworkInformation.NetworkInformationException)
        {
        }

        return urls.Count > 0 ? urls : [$"127.0.0.1:{port}"];
    }

    /// <summary>A peer told of a server it met (gossip): the route manager dials it unless it is known.</summary>
    internal void OnImplicitRoute(RouteInfo info) => RouteManager.Tell(new Cluster.RouteManager.Protocol.ImplicitRoute(info));

    /// <summary>A route registered, went away, or sent new client URLs.</summary>
    internal void OnRoutesChanged()
    {
        _routeInfoLine = null;
        if (_routes is null)
        {
            return;
        }

        UpdateConnectUrls();
        if (ClusterNode.IsNobody())
        {
            return;
        }

        var peers = new List<string>();
        foreach (var route in _routes.Routes)
        {
            if (route.Link.RemoteInfo?.CourierAkka is { } akka)
            {
                peers.Add(akka);
            }
        }

        ClusterNode.Tell(new Cluster.ClusterNode.Protocol.PeersChanged(peers));
    }

    private readonly Lock _connectUrlsLock = new();

    /// <summary>
    /// INFO <c>connect_urls</c>: this node's client URLs and those its routes advertised, unless
    /// <c>no_advertise</c>. When they change, clients that understand async INFO (CONNECT protocol 1)
    /// get a new INFO, so they learn of nodes that came or went (nats-server's
    /// addConnectURLsAndSendINFOToClients). A node in lame duck mode leaves its own URLs out, and the
    /// URLs of a peer that said it is in lame duck mode are left out (nats-server's sendLDMToClients and
    /// removeConnectURLsAndSendINFOToClients), so clients move to the nodes that stay. With
    /// <paramref name="notify"/> false only the INFO is updated (lame duck mode sends its own).
    /// </summary>
    internal void UpdateConnectUrls(bool notify = true)
    {
        if (_options.Cluster.NoAdvertise || _routes is null)
        {
            return;
        }

        // Computed, set and sent under one lock: two routes registering at once on different threads
        // must not let the one that read the routes first set (and send) its older list last, which
        // left a node advertising fewer URLs than it routes to. Route changes are rare; the lock is
        // held while INFO lines are queued on client outbounds, which never call back.
        lock (_connectUrlsLock)
        {
            var urls = _lameDuck ? new List<string>() : new List<string>(OwnClientUrls());
            foreach (var route in _routes.Routes)
            {
                if (route.Link.LameDuck)
                {
                    continue;
                }

                foreach (var url in route.Link.ConnectUrls ?? [])
                {
                    if (!urls.Contains(url))
                    {
                        urls.Add(url);
                    }
                }
            }

            if (!_info.TrySetConnectUrls(urls))
            {
                return;
            }

            if (notify)
            {
                SendInfoToClients();
            }
        }
    }

    /// <summary>An async INFO (the current one) to every client that understands it (CONNECT protocol 1).</summary>
    private void SendInfoToClients()
    {
        Span<byte> line = stackalloc byte[4096]; // bytes: an INFO with a few dozen URLs
        foreach (var client in _registry.Clients)
        {
            if (client.IsServerLink || client.IsInternal || client.IsWebSocket || client.IsMqtt || client.ConnectOptions is not { Protocol: >= 1 })
            {
                continue;
            }

            var length = _info.Format(line, client.Id, client.RemoteIp);
            if (length > 0)
            {
                client.Outbound.Write(line[..length]);
                client.Outbound.Signal();
            }
        }
    }

    /// <summary>The client URLs INFO advertises now (this node's first).</summary>
    public IReadOnlyList<string> ConnectUrls => _info.ConnectUrls ?? OwnClientUrls();
}
