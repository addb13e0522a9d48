using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Courier.Load.Nemesis;

/// <summary>
/// The bench's network: one namespace per node (<c>nem-1</c> ...), each with a veth into a bridge that lives
/// in a namespace of its own (<c>nem-br</c>), and one veth from the bench's own namespace into that bridge
/// (10.77.0.254), so the workload reaches every node and nothing outside the namespaces made here sees a
/// packet. <c>--net-id N</c> (1-99) names them <c>nemN-...</c> on 10.77.N.0/24, so two benches can run at once. Partitions are blackhole routes inside the node namespaces (no iptables): a node that may not
/// reach another drops what it sends there, so a TCP link between them stalls as it would on a cut cable.
/// </summary>
internal sealed class NemesisNet : IDisposable
{
    private static int _id;                      // --net-id
    private static string Prefix => _id == 0 ? "nem" : $"nem{_id}";
    private static string Bridge => Prefix + "-br";
    private static string HostLink => Prefix + "-host";  // the bench's end of its veth into the bridge
    private static string Subnet => $"10.77.{_id}";      // a /24 used by nothing else on this machine (checked in Create)
    private readonly int _nodes;
    private readonly HashSet<(int From, int To)> _blocked = [];

    private NemesisNet(int nodes) => _nodes = nodes;

    /// <summary>Node <paramref name="index"/>'s address (index from 0).</summary>
    public static string Address(int index) => $"{Subnet}.{index + 1}";

    public static string Namespace(int index) => $"{Prefix}-{index + 1}";

    /// <summary>Which namespaces and /24 this process uses (0: <c>nem-*</c> on 10.77.0.0/24); set before <see cref="Create"/>.</summary>
    public static void UseId(int id) => _id = id is >= 0 and <= 99 ? id : throw new ArgumentOutOfRangeException(nameof(id), "--net-id is 0..99");

    /// <summary>The pairs that cannot reach each other now (each pair once, lower index first).</summary>
    public IReadOnlyCollection<(int From, int To)> Blocked => _blocked;

    /// <summary>Makes the namespaces, the bridge and the links; leftovers of an interrupted run are removed first.</summary>
    public static NemesisNet Create(int nodes)
    {
        RemoveLeftovers(nodes);
        if (Run("ip", "-4 route show").Contains($"{Subnet}.", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"{Subnet}.0/24 is already routed on this machine; the bench will not share it");
        }

        var net = new NemesisNet(nodes);
        try
        {
            Run("ip", $"netns add {Bridge}");
            Run("ip", $"-n {Bridge} link set lo up");
            Run("ip", $"-n {Bridge} link add br0 type bridge");
            Run("ip", $"-n {Bridge} link set br0 up");
            for (var i = 0; i < nodes; i++)
            {
                var ns = Namespace(i);
                Run("ip", $"netns add {ns}");
                Run("ip", $"-n {ns} link set lo up");
                Run("ip", $"link add {Prefix}-v{i + 1} type veth peer name eth0 netns {ns}");
                Attach($"{Prefix}-v{i + 1}");
                Run("ip", $"-n {ns} addr add {Address(i)}/24 dev eth0");
                Run("ip", $"-n {ns} link set eth0 up");
            }

            Run("ip", $"link add {HostLink} type veth peer name {Prefix}-vh");
            Attach($"{Prefix}-vh");
            Run("ip", $"addr add {Subnet}.254/24 dev {HostLink}");
            Run("ip", $"link set {HostLink} up");
            return net;
        }
        catch
        {
            net.Dispose();
            throw;
        }
    }

    private static void Attach(string link)
    {
        Run("ip", $"link set {link} netns {Bridge}");
        Run("ip", $"-n {Bridge} link set {link} master br0");
        Run("ip", $"-n {Bridge} link set {link} up");
    }

    /// <summary>Cuts every link between a node in <paramref name="a"/> and a node in <paramref name="b"/>, both ways.</summary>
    public void Cut(IEnumerable<int> a, IEnumerable<int> b)
    {
        var right = b.ToArray();
        foreach (var x in a)
        {
            foreach (var y in right)
            {
                if (x == y)
                {
                    continue;
                }

                var pair = (Math.Min(x, y), Math.Max(x, y));
                if (_blocked.Add(pair))
                {
                    Run("ip", $"-n {Namespace(x)} route add blackhole {Address(y)}/32");
                    Run("ip", $"-n {Namespace(y)} route add blackhole {Address(x)}/32");
                }
            }
        }
    }

    /// <summary>Every node reaches every other again.</summary>
    public void Heal()
    {
        foreach (var (x, y) in _blocked)
        {
            Run("ip", $"-n {Namespace(x)} route del blackhole {Address(y)}/32");
            Run("ip", $"-n {Namespace(y)} route del blackhole {Address(x)}/32");
        }

        _blocked.Clear();
    }

    public void Dispose() => RemoveLeftovers(_nodes);

    private static void RemoveLeftovers(int nodes)
    {
        Run("ip", $"link del {HostLink}", check: false);
        for (var i = 0; i < Math.Max(nodes, 5); i++)
        {
            Run("ip", $"netns del {Namespace(i)}", check: false);
        }

        Run("ip", $"netns del {Bridge}", check: false);
    }

    internal static string Run(string file, string arguments, bool check = true)
    {
        var psi = new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true };
        using var process = Process.Start(psi) ?? throw new InvalidOperationException($"could not start {file}");
        var output = new StringBuilder();
        output.Append(process.StandardOutput.ReadToEnd());
        var error = process.StandardError.ReadToEnd();
        if (!process.WaitForExit(30_000))
        {
            process.Kill();
            throw new TimeoutException($"{file} {arguments} did not finish in 30 s");
        }

        if (check && process.ExitCode != 0)
        {
            throw new InvalidOperationException(string.Create(CultureInfo.InvariantCulture, $"{file} {arguments} exited with {process.ExitCode}: {error.Trim()}"));
        }

        return output.ToString();
    }
}
