"""The AWS account through which Elastic Load Balancing delivers access logs in each
Region launched before August 2022 (generated: python scripts/extract_elb_accounts.py,
from hashicorp/terraform-provider-aws internal/service/elb/service_account_data_source.go at 01f431114674; do not edit).

The ELB user guide lists the same ids ("Enable access logs for your Application Load
Balancer", https://docs.aws.amazon.com/elasticloadbalancing/latest/application/enable-access-logging.html);
a Region not listed delivers as logdelivery.elasticloadbalancing.amazonaws.com.
"""

SOURCE = "https://github.com/hashicorp/terraform-provider-aws/blob/01f431114674c27cf790fafb67ac274bf8f765e1/internal/service/elb/service_account_data_source.go"
ELB_LOG_ACCOUNTS = {
    "af-south-1": "098369216593",
    "ap-east-1": "754344448648",
    "ap-northeast-1": "582318560864",
    "ap-northeast-2": "600734575887",
    "ap-northeast-3": "383597477331",
    "ap-south-1": "718504428378",
    "ap-southeast-1": "114774131450",
    "ap-southeast-2": "783225319266",
    "ap-southeast-3": "589379963580",
    "ca-central-1": "985666609251",
    "cn-north-1": "638102146993",
    "cn-northwest-1": "037604701340",
    "eu-central-1": "054676820928",
    "eu-north-1": "897822967062",
    "eu-south-1": "635631232127",
    "eu-west-1": "156460612806",
    "eu-west-2": "652711504416",
    "eu-west-3": "009996457667",
    "me-south-1": "076674570225",
    "sa-east-1": "507241528517",
    "us-east-1": "127311923021",
    "us-east-2": "033677994240",
    "us-gov-east-1": "190560391635",
    "us-gov-west-1": "048591011584",
    "us-west-1": "027434742980",
    "us-west-2": "797873946194",
}
