//! The plugin binary Terraform starts; everything lives in the library.

fn main() -> std::process::ExitCode {
    terraform_provider_karpenter::run()
}
